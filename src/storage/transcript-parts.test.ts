import { describe, expect, it } from 'vitest';
import { isCompactError } from '../core/errors.js';
import { readTranscriptLines, transcriptParts } from './transcript-parts.js';

/** Plans and "writes" transcripts into a map, as an adapter would. */
function archive() {
  const files = new Map<string, string>();
  const parts = transcriptParts();
  return {
    files,
    save(transcript: unknown[], step = 1) {
      const planned = parts.plan('s', transcript, step);
      files.set(planned.name, planned.body);
      planned.commit();
      return planned.name;
    },
    read: (name: string) => readTranscriptLines(name, async (file) => files.get(file)),
  };
}

const messages = (n: number, tag = 'm') =>
  Array.from({ length: n }, (_, i) => ({ role: 'user', content: `${tag}${i}` }));

describe('transcript parts', () => {
  it('writes a grown history as the new messages only, and reads every write back whole', async () => {
    const a = archive();
    const names = [a.save(messages(3)), a.save(messages(5)), a.save(messages(5)), a.save(messages(9), 2)];
    expect(names.map((name) => name.endsWith('.part.jsonl'))).toEqual([false, true, true, true]);
    expect(new Set(names).size).toBe(4);
    expect(a.files.get(names[2]!)!.trim().split('\n')).toHaveLength(1);
    for (const [index, count] of [3, 5, 5, 9].entries())
      expect((await a.read(names[index]!)).map((line) => JSON.parse(line))).toEqual(messages(count));
  });

  it('writes an edited, rewound or other history whole', async () => {
    const a = archive();
    a.save(messages(4));
    expect(a.save(messages(2))).not.toMatch(/\.part\./);
    expect(
      a.save([...messages(1), { role: 'user', content: 'edited' }, ...messages(4).slice(2)]),
    ).not.toMatch(/\.part\./);
    expect(a.save(messages(6, 'x'))).not.toMatch(/\.part\./);
  });

  it('names the file when a part continues nothing it can read', async () => {
    const a = archive();
    const base = a.save(messages(2));
    const part = a.save(messages(3));
    a.files.delete(base);
    const missing = await a.read(part).catch((error: unknown) => error);
    expect(isCompactError(missing, 'invalid_messages')).toBe(true);
    expect(String(missing)).toContain(base);
    a.files.set(part, '{"continues":"../etc/passwd","from":0}\n');
    await expect(a.read(part)).rejects.toThrow(/names no transcript/);
    a.files.set(part, `{"continues":"${part}","from":0}\n`);
    await expect(a.read(part)).rejects.toThrow(/names no transcript/);
  });
});
