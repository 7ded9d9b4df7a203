/**
 * The archive only grows (issue 34, point 5): every write takes a new name, nothing is moved
 * aside or rewritten, a replayed transcript is archived about once (parts), and the readers
 * (replay of a folder, status, recall) read this layout and the one before write ids.
 */
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readLatestTranscript } from '../../src/cli/replay/read-transcript.js';
import { readSessionStatus } from '../../src/cli/status/status-command.js';
import { fsStorage } from '../../src/storage/fs/index.js';
import { cli, useTempFiles } from '../support/cli-fixtures.js';
import { filesUnder } from '../support/temp-dirs.js';

const temp = useTempFiles();
const OLD_LAYOUT = 'test/fixtures/archive-before-write-ids';
const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** The three vendored SWE-agent transcripts as one long session (one system prompt). */
async function chainedTranscript(): Promise<Record<string, unknown>[]> {
  const messages: Record<string, unknown>[] = [];
  for (const name of ['pydicom', 'ctf', 'marshmallow']) {
    const transcript = JSON.parse(
      await readFile(`test/fixtures/transcripts/swe-agent-${name}.json`, 'utf8'),
    ) as Record<string, unknown>[];
    for (const message of transcript)
      if (message.role !== 'system' || messages.length === 0) messages.push(message);
  }
  return messages;
}

const bytes = (files: Map<string, string>) =>
  [...files.values()].reduce((sum, text) => sum + Buffer.byteLength(text), 0);

describe('append-only archive', () => {
  it('a replay archives each message about once (transcripts at most 1.2x the messages, the whole archive 3x), no file moved aside or rewritten', async () => {
    const messages = await chainedTranscript();
    const input = await temp.file('chained.json', messages);
    const out = temp.path('archive');
    const first = await cli(['replay', input, '--max-context', '16000', '--out', out, '--json']);
    expect(first.code).toBe(0);
    const compactions = JSON.parse(first.stdout).compactions.length;
    expect(compactions).toBeGreaterThanOrEqual(3);
    const archived = await filesUnder(out);
    const names = [...archived.keys()].map((path) => path.split('/').at(-1)!);
    const transcripts = names.filter((name) => name.startsWith('transcript-pre-compact-'));
    // One transcript per compaction, each under its own name; all but the first are parts.
    expect(transcripts).toHaveLength(compactions);
    expect(transcripts.filter((name) => name.endsWith('.part.jsonl'))).toHaveLength(compactions - 1);
    expect(names.some((name) => name.endsWith('.prev'))).toBe(false);
    const transcriptBytes = Buffer.byteLength(messages.map((m) => JSON.stringify(m)).join('\n'));
    // Before issue 34: 4.2x (every compaction wrote the whole history again). The transcripts
    // hold each message about once; the rest of the archive (summaries with their instruction
    // sections, events, artifacts) stays within the same bound in all.
    const transcriptFiles = new Map(
      [...archived].filter(([path]) => path.includes('transcript-pre-compact-')),
    );
    expect(bytes(transcriptFiles)).toBeLessThanOrEqual(1.2 * transcriptBytes);
    expect(bytes(archived)).toBeLessThanOrEqual(3 * transcriptBytes);
    // The newest transcript reads back whole: the history before the last compaction.
    const latest = await readLatestTranscript(join(out, 'replay'));
    expect(latest!.length).toBeGreaterThan(messages.length / 2);
    expect(latest).toEqual(messages.slice(0, latest!.length));

    // The same session again with no state (a lost store): versions restart at 1, steps repeat.
    const again = await cli(['replay', input, '--max-context', '16000', '--out', out, '--json']);
    expect(again.code).toBe(0);
    const now = await filesUnder(out);
    for (const [path, text] of archived) {
      if (path.endsWith('events.jsonl')) expect(now.get(path)!.startsWith(text)).toBe(true);
      else expect(now.get(path), path).toBe(text);
    }
    expect(now.size).toBeGreaterThan(archived.size);
    expect([...now.keys()].some((path) => path.endsWith('.prev'))).toBe(false);
  });

  it('status and replay read the new layout: the newest summary and the whole newest transcript', async () => {
    const messages = await chainedTranscript();
    const out = temp.path('archive-status');
    await cli(['replay', await temp.file('c2.json', messages), '--max-context', '16000', '--out', out]);
    const folder = join(out, 'replay');
    const status = await readSessionStatus(folder);
    expect(status.compactions).toBeGreaterThanOrEqual(3);
    expect(status.summary?.version).toBe(status.lastCompaction?.version);
    expect(status.layers?.pinnedMessages).toBe(1);
    const replayed = await cli(['replay', folder, '--max-context', '16000', '--json']);
    expect(replayed.code).toBe(0);
    expect(JSON.parse(replayed.stdout).calls).toBeGreaterThan(10);
  });

  it('reads an archive written before write ids (numbered names, .prev files) as before', async () => {
    const root = await mkdtemp(join(tmpdir(), 'old-layout-'));
    made.push(root);
    await cp(OLD_LAYOUT, root, { recursive: true, mode: 0 });
    const folder = join(root, 'replay');
    // Replay reads the highest step, never a file moved aside.
    const latest = await readLatestTranscript(folder);
    const step3 = (await readFile(join(folder, 'transcript-pre-compact-003.jsonl'), 'utf8'))
      .trim()
      .split('\n');
    expect(latest).toEqual(step3.map((line) => JSON.parse(line)));
    const status = await readSessionStatus(folder);
    expect(status.compactions).toBe(3);
    expect(status.summary?.version).toBe(3);
    expect(status.layers?.pinnedMessages).toBeGreaterThan(0);
    // Recall reads the old artifact names; a new write of a ref supersedes the old file for reads.
    const storage = fsStorage({ path: root });
    const listed = await storage.listArtifacts!('replay');
    expect(listed.map((artifact) => artifact.ref).sort()).toEqual(
      (await readdir(join(folder, 'artifacts')))
        .filter((name) => name.endsWith('.json'))
        .map((name) => name.slice(0, -5))
        .sort(),
    );
    const old = await storage.loadArtifact!('replay', 'sum-v1');
    expect(old?.kind).toBe('summarized');
    await storage.saveArtifact!('replay', { ...old!, text: 'a later sum-v1', createdAt: Date.now() });
    expect((await storage.loadArtifact!('replay', 'sum-v1'))?.text).toBe('a later sum-v1');
    const kept = JSON.parse(await readFile(join(folder, 'artifacts', 'sum-v1.json'), 'utf8'));
    expect(kept.text).toBe(old!.text);
    const report = await cli(['report', folder, '--out', join(root, 'report.html')]);
    expect(report.code).toBe(0);
    expect(report.stdout).toContain('3 compactions');
  });
});
