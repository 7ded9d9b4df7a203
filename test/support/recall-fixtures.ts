/** A recall archive with two sessions, and the calls the adapter tests make against it. */
import { RecallArchive } from '../../src/recall/recall-archive.js';
import { memoryStorage } from '../../src/storage/memory/memory-storage.js';
import { sampleArtifact } from '../../src/testing/sample-artifact.js';

/** The text archived in `chat-1` under `tool-abc` (3 pages of 200 chars). */
export const ABC_TEXT = Array.from({ length: 30 }, (_, i) => `row ${String(i).padStart(2, '0')} ok`)
  .join('\n')
  .concat('\nretry budget: 17 attempts per hour\n', 'x'.repeat(150));

/** An archive where `chat-1` holds `tool-abc` and `chat-2` holds `tool-other` (a secret of chat-2). */
export async function twoSessionArchive(): Promise<RecallArchive> {
  const recall = new RecallArchive(memoryStorage(), { pageChars: 200 });
  await recall.storage.saveArtifact!('chat-1', sampleArtifact('chat-1', 'tool-abc', ABC_TEXT));
  await recall.storage.saveArtifact!(
    'chat-2',
    sampleArtifact('chat-2', 'tool-other', 'chat-2 launch code 0451'),
  );
  return recall;
}

/** Strict-mode inputs (every field present, `null` when unused). */
export function strictInput(fields: Record<string, unknown>): Record<string, unknown> {
  return { ref: null, query: null, page: null, page_chars: null, limit: null, ...fields };
}

/** The calls every adapter test makes, in order, and what each answer must contain. */
export const RECALL_CALLS: { input: Record<string, unknown>; expect: RegExp }[] = [
  {
    input: { ref: 'tool-abc', page: 2 },
    expect: /\[recall ref "tool-abc": output of tool "grep", page 2 of \d+/,
  },
  {
    input: { query: 'retry budget attempts' },
    expect: /ref "tool-abc"[\s\S]*retry budget: 17 attempts per hour/,
  },
  { input: { ref: 'tool-other' }, expect: /recall error \(unknown_ref\)/ },
  { input: { ref: '../chat-2/tool-other' }, expect: /recall error \(invalid_ref\)/ },
  { input: { ref: '/etc/passwd' }, expect: /recall error \(invalid_ref\)/ },
  { input: { query: 'launch code 0451' }, expect: /no archived passage matches/ },
  { input: { ref: 'tool-abc', page_chars: 50_000_000 }, expect: /recall error \(page_too_large\)/ },
];
