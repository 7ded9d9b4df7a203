/**
 * An archive write that never settles (a custom adapter that hangs, a hung network mount) is
 * given up after `archiveTimeoutMs`: the call goes on, the failure is one `compact.error`
 * (`storage_failed`), `requireArchive` blocks pruning, `flush()` returns, the caller's messages
 * are untouched, and once the adapter answers again the next writes land and the recovery is
 * reported, with nothing earlier overwritten.
 */
import { describe, expect, it } from 'vitest';
import type {
  ArchivedArtifact,
  ArchivedSummary,
  StorageAdapter,
} from '../../src/core/archive/storage-adapter.js';
import type { TokenCounter } from '../../src/core/counting/token-counter.js';
import { isCompactError } from '../../src/core/errors.js';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactMessage } from '../../src/core/messages/message.js';
import { memoryStorage } from '../../src/storage/memory/index.js';

const charCounter: TokenCounter = {
  name: 'chars',
  exact: true,
  requestOverhead: 0,
  countText: (text) => text.length,
  countMessage: (m: CompactMessage) =>
    m.text.length +
    m.toolCalls.reduce((s, c) => s + c.arguments.length, 0) +
    m.toolResults.reduce((s, r) => s + r.output.length, 0),
  countTools: (tools) => JSON.stringify(tools).length,
};

function toolTurns(n: number, seed: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `${seed} question ${i} `.padEnd(80, 'q') });
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: `call_${i}`, type: 'function', function: { name: 'read', arguments: `{"i":${i}}` } },
      ],
    });
    out.push({ role: 'tool', tool_call_id: `call_${i}`, content: `${seed} output ${i} `.padEnd(120, 'o') });
    out.push({ role: 'assistant', content: `${seed} answer ${i} `.padEnd(60, 'a') });
  }
  return out;
}

/**
 * A memory archive whose writes do not settle while `hung` is set (as on a hung mount); held
 * writes land when `release()` is called, late, as a mount that comes back would write them.
 */
function hangingStorage() {
  const inner = memoryStorage();
  const hung = { on: true };
  const held: (() => void)[] = [];
  let calls = 0;
  const hold =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      calls++;
      if (!hung.on) return write(...args);
      return new Promise<R>((resolve, reject) => held.push(() => write(...args).then(resolve, reject)));
    };
  const storage: StorageAdapter = {
    name: 'hanging',
    saveTranscript: hold((id: string, messages: readonly unknown[], step: number) =>
      inner.saveTranscript(id, messages, step),
    ),
    saveSummary: hold((id: string, summary: ArchivedSummary, step: number) =>
      inner.saveSummary(id, summary, step),
    ),
    saveEvent: hold((id: string, event: AnyCompactEvent) => inner.saveEvent(id, event)),
    saveArtifact: hold((id: string, artifact: ArchivedArtifact) => inner.saveArtifact(id, artifact)),
    loadArtifact: (id, ref) => inner.loadArtifact(id, ref),
    latestSummaryStep: (id) => inner.latestSummaryStep!(id),
  };
  const release = () => {
    hung.on = false;
    for (const write of held.splice(0)) write();
  };
  return { storage, inner, hung, release, calls: () => calls };
}

function manager(storage: StorageAdapter, extra: Record<string, unknown> = {}) {
  return new CompactManager({
    maxContextTokens: 6_000,
    tokenCounter: charCounter,
    storage,
    archiveTimeoutMs: 20,
    policy: { keepRecentTurns: 2, keepToolIoPairs: 1, hardCapBuffer: 300 },
    ...extra,
  });
}

describe('an archive write that never settles', () => {
  it('is given up: the call goes on, one storage_failed, flush returns, recovery lands later', async () => {
    const { storage, inner, release } = hangingStorage();
    const target = manager(storage);
    const events: { properties: Record<string, unknown> }[] = [];
    target.on('compact.error', (event) => events.push(event));
    target.on('compact.warning', (event) => events.push(event));
    let compacted = false;
    for (let turns = 10; turns <= 40 && !compacted; turns++) {
      const messages = toolTurns(turns, 'x');
      const before = JSON.stringify(messages);
      const result = await target.compact('s', messages);
      expect(JSON.stringify(messages)).toBe(before);
      expect(result.tokensAfter).toBeLessThanOrEqual(target.budget);
      compacted = result.tokensAfter < result.tokensBefore;
    }
    expect(compacted).toBe(true);
    await target.flush();
    const failures = events.filter((e) => e.properties.errorType === 'storage_failed');
    expect(failures).toHaveLength(1);
    expect(String(failures[0]!.properties.message)).toMatch(/did not settle within 20 ms/);
    // The adapter answers again: the next compaction's writes land and the outage ends once.
    release();
    for (let turns = 41; turns <= 80; turns++) {
      const result = await target.compact('s', toolTurns(turns, 'x'));
      if (
        events.some((e) => e.properties.code === 'storage_recovered') &&
        result.tokensAfter < result.tokensBefore
      )
        break;
    }
    await target.flush();
    expect(events.filter((e) => e.properties.code === 'storage_recovered')).toHaveLength(1);
    // The writes given up landed late, each under its own name: none overwrote another.
    const archived = inner.snapshot('s')!;
    expect(archived.superseded).toEqual([]);
    expect(archived.transcripts.size).toBeGreaterThanOrEqual(2);
    await target.shutdown();
  });

  it('with requireArchive: storage_failed, nothing pruned', async () => {
    const { storage } = hangingStorage();
    const target = manager(storage, { requireArchive: true });
    let error: unknown;
    for (let turns = 10; turns <= 40 && error === undefined; turns++) {
      error = await target.compact('s', toolTurns(turns, 'y')).then(
        () => undefined,
        (e: unknown) => e,
      );
    }
    expect(isCompactError(error, 'storage_failed')).toBe(true);
    expect(String((error as Error).message)).toMatch(/did not settle.*nothing was pruned/);
    expect(await target.state('s')).toBeUndefined();
  });

  it('archiveTimeoutMs out of range is invalid_config naming the field', () => {
    for (const bad of [0, -1, 1.5, 700_000, '10'])
      expect(() => manager(memoryStorage(), { archiveTimeoutMs: bad })).toThrow(
        expect.objectContaining({
          code: 'invalid_config',
          message: expect.stringMatching(/archiveTimeoutMs/),
        }),
      );
  });
});
