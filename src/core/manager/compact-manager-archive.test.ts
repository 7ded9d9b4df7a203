import { describe, expect, it } from 'vitest';
import { charCounter, chatTurns, collect } from '../../../test/support/manager-fixtures.js';
import type { StorageAdapter } from '../archive/storage-adapter.js';
import type { AnyCompactEvent, CompactEvent } from '../events/events.js';
import { MemorySessionStore } from '../session/session-store.js';
import { EmbeddedSummarizer } from '../summary/embedded-summarizer.js';
import type { Summarizer } from '../summary/summarizer.js';
import { CompactManager } from './compact-manager.js';

describe('archive, redaction and stores', () => {
  it('archives the redacted transcript before pruning, then the summary and events; a failing archive costs nothing', async () => {
    const written: { kind: string; data: unknown }[] = [];
    const storage: StorageAdapter = {
      name: 'memory',
      async saveTranscript(_s, transcript, step) {
        written.push({ kind: 'transcript', data: transcript });
        return `t-${step}`;
      },
      async saveSummary(_s, summary, step) {
        written.push({ kind: 'summary', data: summary });
        return `s-${step}`;
      },
      async saveEvent(_s, event) {
        written.push({ kind: 'event', data: event });
      },
    };
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0 },
      storage,
    });
    const messages = [
      { role: 'user', content: 'my api_key=sk-abc123xyz and password: hunter2' },
      ...chatTurns(8, 30),
      { role: 'user', content: 'kept verbatim: api_key=sk-keptverbatim42' },
    ];
    const result = await manager.manualCompact('s', messages);
    await manager.flush();
    expect(written[0]!.kind).toBe('transcript');
    expect(JSON.stringify(written)).not.toContain('sk-abc123xyz');
    expect(JSON.stringify(written)).not.toContain('hunter2');
    expect(JSON.stringify(written[0]!.data)).toContain('api_key=<REDACTED>');
    expect(written.some((w) => w.kind === 'summary')).toBe(true);
    expect(written.filter((w) => w.kind === 'event').map((w) => (w.data as AnyCompactEvent).name)).toContain(
      'compact.archival',
    );
    // Messages kept verbatim are not redacted; the summary of pruned ones is (redactSummarizerInput).
    expect(JSON.stringify(result.messages)).toContain('sk-keptverbatim42');
    expect(JSON.stringify(result.messages)).not.toContain('sk-abc123xyz');

    const broken: StorageAdapter = {
      ...storage,
      saveTranscript: async () => Promise.reject(new Error('disk full')),
    };
    const manager2 = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0 },
      storage: broken,
    });
    const events = collect(manager2);
    const r2 = await manager2.manualCompact('s', messages);
    expect(r2.applied).toBe(true);
    expect(
      (events.find((e) => e.name === 'compact.error') as CompactEvent<'compact.error'>).properties.message,
    ).toContain('disk full');
  });

  it('redacts what goes to an LLM summarizer unless told not to', async () => {
    const seen: string[] = [];
    const spy: Summarizer = {
      name: 'spy',
      async summarize(request) {
        seen.push(JSON.stringify(request.messages));
        return { text: 'summary' };
      },
    };
    const messages = [{ role: 'user', content: 'use password: hunter2 please' }, ...chatTurns(8, 30)];
    const optedOut = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0 },
      summarizer: spy,
      redactSummarizerInput: false,
    });
    await optedOut.manualCompact('s', messages);
    // An LLM summarizer's input leaves the process: redacted by default.
    const byDefault = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0 },
      summarizer: spy,
    });
    await byDefault.manualCompact('s', messages);
    expect(seen[0]).toContain('hunter2');
    expect(seen[1]).not.toContain('hunter2');
    expect(seen[1]).toContain('password: <REDACTED>');
  });

  it('warns once when redaction is disabled', async () => {
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      redaction: false,
    });
    const events = collect(manager);
    await manager.compact('s', chatTurns(2));
    await manager.compact('s', chatTurns(2));
    expect(
      events.filter(
        (e) =>
          e.name === 'compact.error' &&
          (e as CompactEvent<'compact.error'>).properties.errorType === 'redaction_disabled',
      ),
    ).toHaveLength(1);
  });

  it('serializes compactions of one session and honours the store version', async () => {
    const store = new MemorySessionStore();
    const manager = new CompactManager({ maxContextTokens: 100_000, tokenCounter: charCounter, store });
    const messages = chatTurns(12, 30);
    const results = await Promise.all([
      manager.manualCompact('s', messages),
      manager.manualCompact('s', messages),
    ]);
    expect(results.map((r) => r.version).sort()).toEqual([1, 2]);
    expect((await manager.state('s'))!.version).toBe(2);
    expect(
      await store.set(
        's',
        { sessionId: 's', version: 9, coveredIds: [], updatedAt: 0 },
        { expectedVersion: 1 },
      ),
    ).toBe(false);
    await manager.reset('s');
    expect(await manager.state('s')).toBeUndefined();
  });

  it('reloads when another process compacted first', async () => {
    const store = new MemorySessionStore();
    const a = new CompactManager({ maxContextTokens: 100_000, tokenCounter: charCounter, store });
    const b = new CompactManager({ maxContextTokens: 100_000, tokenCounter: charCounter, store });
    const messages = chatTurns(12, 30);
    // c's summarizer starts, then waits until a has compacted: c read the state before a wrote.
    let entered!: () => void;
    const started = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow: Summarizer = {
      name: 'slow',
      summarize: async (r) => {
        entered();
        await gate;
        return new EmbeddedSummarizer().summarize(r);
      },
    };
    const c = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      store,
      summarizer: slow,
    });
    const events = collect(c);
    const pending = c.manualCompact('s', messages);
    await started;
    await a.manualCompact('s', messages);
    release();
    const result = await pending;
    expect(
      events.some(
        (e) =>
          e.name === 'compact.error' &&
          (e as CompactEvent<'compact.error'>).properties.errorType === 'concurrent_compaction',
      ),
    ).toBe(true);
    expect(result.version).toBe(1);
    expect((await b.state('s'))!.version).toBe(1);
  });
});
