/**
 * Test data for archive adapters: a sample artifact and references a model might forge. No
 * test runner needed (the artifact conformance suite in `agent-compaction/testing/conformance`
 * uses them).
 */
import type { ArchivedArtifact } from '../core/archive/storage-adapter.js';

/** An artifact of `sessionId` under `ref`, for tests. */
export function sampleArtifact(
  sessionId: string,
  ref: string,
  text: string,
  extra: Partial<ArchivedArtifact> = {},
): ArchivedArtifact {
  return {
    ref,
    sessionId,
    kind: 'tool_result',
    text,
    ...(extra.kind === 'summarized' || extra.kind === 'message' ? {} : { toolName: 'grep' }),
    messageIndex: 3,
    step: 1,
    createdAt: Date.UTC(2025, 9, 19, 12, 0, 0),
    ...extra,
  };
}

/** References the model might forge to leave its session's archive; every adapter must refuse them. */
export const FORGED_REFS: readonly unknown[] = Object.freeze([
  '../other/tool-abc',
  '../../etc/passwd',
  '/etc/passwd',
  'C:\\Windows\\win.ini',
  'tool-abc/../../x',
  'tool-abc/..',
  '..',
  '.',
  '',
  'TOOL-ABC',
  'tool-abc.json',
  'tool-abc\u0000',
  'tool-%2e%2e',
  `tool-${'a'.repeat(200)}`,
  42,
  null,
]);
