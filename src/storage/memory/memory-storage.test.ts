import { describe, expect, it } from 'vitest';
import { describeArtifactConformance } from '../../testing/artifact-conformance.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { describeStorageConformance } from '../../testing/storage-conformance.js';
import { safeSessionSegment } from '../session-path.js';
import { memoryStorage } from './memory-storage.js';

function memoryHarness() {
  const adapter = memoryStorage();
  return {
    adapter,
    isInsideRoot: (location: string) =>
      /^memory:\/\/[^/]+\/[^/]/.test(location) && !location.includes('/../'),
    close: async () => {},
  };
}

describeArtifactConformance({ name: 'memory', create: async () => memoryHarness() });

describeStorageConformance({
  name: 'memory',
  async create() {
    const { adapter, isInsideRoot, close } = memoryHarness();
    return {
      adapter,
      isInsideRoot,
      close,
      async read(location) {
        const match =
          /^memory:\/\/([^/]+)\/((transcript-pre-compact|summary)-\d{3}-[0-9a-z-]+\.jsonl?)$/.exec(location);
        if (!match) throw new Error(`not a memory location: ${location}`);
        const session = adapter.sessions().find((id) => safeSessionSegment(id) === match[1]);
        const stored = adapter.snapshot(session!)!;
        if (match[3] === 'summary') return JSON.stringify(stored.summaries.get(match[2]!));
        return stored.transcripts
          .get(match[2]!)!
          .map((message) => `${JSON.stringify(message ?? null)}\n`)
          .join('');
      },
      async readEvents(sessionId) {
        return JSON.parse(JSON.stringify(adapter.snapshot(sessionId)?.events ?? []));
      },
    };
  },
});

describe('memoryStorage', () => {
  it('copies transcripts and events in, so later changes by the caller are not archived', async () => {
    const storage = memoryStorage();
    const transcript = [{ role: 'user', content: 'first' }];
    const location = await storage.saveTranscript('s', transcript, 1);
    transcript[0]!.content = 'changed';
    const [event] = sampleCompactionEvents({ sessionId: 's' });
    await storage.saveEvent('s', event!);
    (event as { sessionId: string }).sessionId = 'other';
    const snapshot = storage.snapshot('s')!;
    expect(snapshot.transcripts.get(location.split('/').at(-1)!)).toEqual([
      { role: 'user', content: 'first' },
    ]);
    expect(snapshot.events[0]?.sessionId).toBe('s');
    expect(storage.sessions()).toEqual(['s']);
  });
});
