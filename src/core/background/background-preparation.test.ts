import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  charCounter,
  chatTurns,
  GatedSummarizer,
  nextTurn,
  turnsUntil,
} from '../../../test/support/background-fixtures.js';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { isCompactError } from '../errors.js';
import type { AnyCompactEvent } from '../events/events.js';
import { CompactManager, type CompactManagerOptions } from '../manager/compact-manager.js';
import { MemorySessionStore } from '../session/session-store.js';
import type { Summarizer } from '../summary/summarizer.js';

/**
 * A 10,000-token window, one token per character, 200 tokens a turn: preparation from 7,000
 * (35 turns), trigger at 8,500 (43 turns), target 5,000, six recent turns kept.
 */
function mk(summarizer: Summarizer, extra: Partial<CompactManagerOptions> = {}): CompactManager {
  return new CompactManager({
    maxContextTokens: 10_000,
    tokenCounter: charCounter,
    summarizer,
    background: true,
    policy: { hardCapBuffer: 500 },
    ...extra,
  });
}

/** Preflights every prefix of `history` from `from` to `to` turns. */
async function grow(manager: CompactManager, history: unknown[], from: number, to: number): Promise<void> {
  for (let n = from; n <= to; n++) await manager.preflight('s', history.slice(0, 2 * n));
}

function collect(manager: CompactManager): AnyCompactEvent[] {
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  return events;
}

describe('background preparation and swap', () => {
  it('prepares once past prepareAtPct without blocking, and swaps the summary in at the trigger', async () => {
    const summarizer = new GatedSummarizer();
    const manager = mk(summarizer);
    const events = collect(manager);
    const history = chatTurns(50);
    // The summarizer stays blocked: these calls return anyway.
    await grow(manager, history, 30, 38);
    await summarizer.requested();
    expect(summarizer.requests).toHaveLength(1);
    // 35 turns reached 7,000 tokens: the 23 oldest turns are folded, what the trigger (8,500)
    // sheds to reach the target (5,000) plus the summary's room (1,500); the rest stays verbatim,
    // as deep as a synchronous compaction goes.
    expect(summarizer.requests[0]!.messages).toHaveLength(46);
    expect(manager.backgroundStatus()).toMatchObject({ started: 1, running: 1, used: 0 });
    expect(events.filter((e) => e.name === 'compact.summary_created')).toHaveLength(0);
    summarizer.release();
    await grow(manager, history, 39, 42);
    const result = await manager.compact('s', history.slice(0, 86));
    expect(result.applied).toBe(true);
    expect(result.version).toBe(1);
    expect(result.summary?.text).toContain('gated call 1: 46 messages');
    expect(summarizer.requests).toHaveLength(1);
    // Everything after the prepared point is sent verbatim.
    expect(result.messages.slice(1)).toEqual(history.slice(46, 86));
    expect(result.tokensAfter).toBeLessThan(manager.triggerTokens);
    expect(manager.backgroundStatus()).toMatchObject({ used: 1, running: 0, kept: 0 });
    const created = events.filter((e) => e.name === 'compact.summary_created');
    expect(created).toHaveLength(1);
    expect(created[0]!.properties).toMatchObject({ version: 1, inputMessages: 46 });
    expect((await manager.state('s'))!.coveredIds).toHaveLength(46);
  });

  it('the prepared and the synchronous compaction reach the same depth: what the target holds stays verbatim (issue 20)', async () => {
    const history = chatTurns(50);
    const depth = async (background: boolean) => {
      // The synchronous run at the same trigger (the cost trigger is off with background).
      const manager = mk(new GatedSummarizer('gated', true), {
        background,
        policy: { hardCapBuffer: 500, costTrigger: false },
      });
      await grow(manager, history, 30, 42);
      await nextTurn();
      await nextTurn();
      const result = await manager.compact('s', history.slice(0, 86));
      expect(result.applied).toBe(true);
      expect(manager.backgroundStatus().used).toBe(background ? 1 : 0);
      return { kept: result.messages.length - 1, tokens: result.tokensAfter, target: 5_000 };
    };
    const [sync, prepared] = [await depth(false), await depth(true)];
    for (const run of [sync, prepared]) {
      // Lands under the target, and near it: not only the policy's six recent turns.
      expect(run.tokens).toBeLessThanOrEqual(run.target);
      expect(run.tokens).toBeGreaterThan(0.7 * run.target);
      expect(run.kept).toBeGreaterThan(12);
    }
    expect(Math.abs(prepared.kept - sync.kept)).toBeLessThanOrEqual(8);
  });

  it('waits for a preparation still running at the trigger instead of starting another', async () => {
    const summarizer = new GatedSummarizer();
    const manager = mk(summarizer);
    const history = chatTurns(50);
    await grow(manager, history, 35, 42);
    await nextTurn();
    const pending = manager.compact('s', history.slice(0, 86));
    await nextTurn();
    summarizer.release();
    const result = await pending;
    expect(result.applied).toBe(true);
    expect(summarizer.requests).toHaveLength(1);
    expect(manager.backgroundStatus().used).toBe(1);
  });

  it("another process's preparation still running at the trigger is awaited, not summarized twice (issue 24)", async () => {
    // Two managers on one shared store stand for two processes serving one session.
    const store = new MemorySessionStore();
    const preparing = new GatedSummarizer('first');
    const compacting = new GatedSummarizer('second', true);
    const first = mk(preparing, { store, sessionLock: true });
    const second = mk(compacting, { store, sessionLock: true });
    const history = chatTurns(50);
    await grow(first, history, 35, 36);
    await preparing.requested();
    expect(preparing.requests).toHaveLength(1);
    // The second process reaches the trigger while the first still summarizes.
    const pending = second.compact('s', history.slice(0, 86));
    await new Promise((resolve) => setTimeout(resolve, 100));
    preparing.release();
    const result = await pending;
    expect(result.applied).toBe(true);
    expect(compacting.requests).toHaveLength(0);
    expect(result.summary?.text).toContain('first call 1');
    expect(second.backgroundStatus().used).toBe(1);
    await first.shutdown();
    await second.shutdown();
  });

  it.each([
    [
      'a message before the prepared point is edited',
      (h: Record<string, unknown>[]) => h.with(10, { role: 'user', content: 'edited'.padEnd(100, 'e') }),
    ],
    ['the history is truncated before the prepared point', (h: Record<string, unknown>[]) => h.slice(4)],
    [
      'a message before the prepared point becomes protected',
      (h: Record<string, unknown>[]) => h.with(20, { ...h[20], meta: { protected: true } }),
    ],
  ])('discards the preparation when %s, and summarizes at the trigger', async (_, edit) => {
    const summarizer = new GatedSummarizer('gated', true);
    const manager = mk(summarizer);
    const history = chatTurns(50);
    await grow(manager, history, 35, 36);
    await nextTurn();
    await summarizer.requested();
    expect(summarizer.requests).toHaveLength(1);
    const edited = edit(history.slice(0, 90));
    const result = await manager.compact('s', edited);
    expect(result.applied).toBe(true);
    expect(summarizer.requests).toHaveLength(2);
    expect(result.summary?.text).toContain('gated call 2');
    expect(manager.backgroundStatus()).toMatchObject({ used: 0, discarded: 1, kept: 0 });
  });

  it('discards the preparation when a message keeps its id but not its content', async () => {
    const summarizer = new GatedSummarizer('gated', true);
    const manager = mk(summarizer);
    const history: Record<string, unknown>[] = chatTurns(50).map((m, k) => ({ ...m, meta: { id: `m${k}` } }));
    await grow(manager, history, 35, 36);
    await nextTurn();
    await summarizer.requested();
    const edited = history.slice(0, 90).with(3, { ...history[3]!, content: 'changed'.padEnd(100, 'c') });
    const result = await manager.compact('s', edited);
    expect(result.summary?.text).toContain('gated call 2');
    expect(manager.backgroundStatus().discarded).toBe(1);
  });

  it.each([
    [
      'a message after the prepared point is edited',
      (h: Record<string, unknown>[]) => h.with(80, { role: 'user', content: 'edited'.padEnd(100, 'e') }),
    ],
    [
      'the history is truncated after the prepared point and grows again',
      (h: Record<string, unknown>[]) => [...h.slice(0, 66), ...chatTurns(12, 100, 'x')],
    ],
  ])('uses the preparation when %s', async (_, edit) => {
    const summarizer = new GatedSummarizer('gated', true);
    const manager = mk(summarizer);
    const history = chatTurns(50);
    await grow(manager, history, 35, 36);
    await nextTurn();
    const edited = edit(history.slice(0, 88));
    const result = await manager.compact('s', edited);
    expect(result.applied).toBe(true);
    expect(summarizer.requests).toHaveLength(1);
    expect(result.summary?.text).toContain('gated call 1');
    expect(result.messages.slice(1)).toEqual(edited.slice(46));
    expect(manager.backgroundStatus().used).toBe(1);
  });

  it('drops a preparation made stale by another compaction, and never uses it later', async () => {
    const summarizer = new GatedSummarizer('gated', true);
    const manager = mk(summarizer);
    const history = chatTurns(60);
    await grow(manager, history, 35, 36);
    await summarizer.requested();
    const manual = await manager.manualCompact('s', history.slice(0, 72));
    expect(manual.version).toBe(1);
    expect(manager.backgroundStatus()).toMatchObject({ discarded: 1, kept: 0 });
    expect(summarizer.requests).toHaveLength(2);
    const later = await manager.compact('s', history.slice(0, 120));
    expect(later.version).toBeGreaterThanOrEqual(1);
    expect(later.summary?.text).not.toContain('gated call 1:');
  });

  it('an aborted preflight stops waiting; the preparation goes on and the next trigger uses it', async () => {
    const summarizer = new GatedSummarizer();
    const manager = mk(summarizer);
    const history = chatTurns(50);
    await grow(manager, history, 35, 36);
    await nextTurn();
    const controller = new AbortController();
    const pending = manager.compact('s', history.slice(0, 86), { signal: controller.signal });
    await nextTurn();
    controller.abort(new Error('user pressed stop'));
    await expect(pending).rejects.toSatisfy((e: unknown) => isCompactError(e, 'aborted'));
    expect(summarizer.aborted).toEqual([]);
    expect(manager.backgroundStatus().running).toBe(1);
    summarizer.release();
    const result = await manager.compact('s', history.slice(0, 86));
    expect(result.applied).toBe(true);
    expect(summarizer.requests).toHaveLength(1);
    expect(manager.backgroundStatus().used).toBe(1);
  });

  it('shutdown aborts running preparations and leaves nothing running', async () => {
    const summarizer = new GatedSummarizer();
    const manager = mk(summarizer);
    const history = chatTurns(50);
    await grow(manager, history, 35, 36);
    // The preparation redacts its input in slices before it calls the summarizer.
    await summarizer.requested();
    expect(manager.backgroundStatus().running).toBe(1);
    await manager.shutdown();
    expect(summarizer.aborted).toEqual([1]);
    expect(manager.backgroundStatus()).toMatchObject({ running: 0, kept: 0 });
    // No new preparation after shutdown.
    await grow(manager, history, 37, 38);
    await nextTurn();
    expect(summarizer.requests).toHaveLength(1);
  });

  it('shutdown before a preparation started cancels it without calling the summarizer', async () => {
    const summarizer = new GatedSummarizer('gated', true);
    const manager = mk(summarizer);
    await manager.preflight('s', chatTurns(36));
    expect(manager.backgroundStatus().running).toBe(1);
    await manager.shutdown();
    expect(summarizer.requests).toHaveLength(0);
    expect(manager.backgroundStatus().running).toBe(0);
  });

  it('a preparation whose summarizer fails carries the fallback, and its error event is emitted when used', async () => {
    let calls = 0;
    const failing: Summarizer = {
      name: 'flaky-llm',
      summarize: async () => {
        calls++;
        throw new Error('provider overloaded');
      },
    };
    const manager = mk(failing);
    const events = collect(manager);
    const history = chatTurns(50);
    await grow(manager, history, 35, 36);
    await turnsUntil(() => calls > 0);
    await nextTurn();
    expect(calls).toBe(1);
    expect(events.filter((e) => e.name === 'compact.error')).toHaveLength(0);
    const result = await manager.compact('s', history.slice(0, 86));
    expect(calls).toBe(1);
    expect(result.summary?.fallback).toBe('embedded');
    expect(manager.backgroundStatus().used).toBe(1);
    const errors = events.filter((e) => e.name === 'compact.error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.properties).toMatchObject({ fallback: 'embedded' });
  });

  it('without background, nothing is prepared and the trigger summarizes', async () => {
    const summarizer = new GatedSummarizer('gated', true);
    // The trigger background mode uses (the cost trigger is off with background).
    const manager = mk(summarizer, { background: false, policy: { hardCapBuffer: 500, costTrigger: false } });
    const history = chatTurns(50);
    await grow(manager, history, 35, 42);
    await nextTurn();
    expect(summarizer.requests).toHaveLength(0);
    const result = await manager.compact('s', history.slice(0, 86));
    expect(result.applied).toBe(true);
    expect(summarizer.requests).toHaveLength(1);
    expect(manager.backgroundStatus().started).toBe(0);
  });

  it('validates prepareAtPct against the trigger', () => {
    expect(() => mk(new GatedSummarizer(), { policy: { prepareAtPct: 0.9 } })).toThrow(
      /policy\.prepareAtPct/,
    );
    expect(() => mk(new GatedSummarizer(), { policy: { prepareAtPct: 0 } })).toThrow(/policy\.prepareAtPct/);
    expect(mk(new GatedSummarizer(), { policy: { triggerPct: 0.5 } }).policy.prepareAtPct).toBeCloseTo(0.4);
  });
});

describe('shutdown in a real process', () => {
  const child = new URL('../../../test/support/background-shutdown-child.ts', import.meta.url).pathname;

  /** Runs the child; resolves its exit code and output, or rejects if it does not end by itself. */
  function run(mode: string): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve, reject) => {
      const proc = spawn(process.execPath, ['--import', 'tsx', child, mode], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      proc.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      const stuck = setTimeout(() => {
        proc.kill('SIGKILL');
        reject(new Error(`the ${mode} child did not exit by itself: something kept it alive (${output})`));
      }, 150_000);
      proc.once('exit', (code) => {
        clearTimeout(stuck);
        resolve({ code, output });
      });
    });
  }

  it.each(['running', 'pending', 'waiting'])(
    'the process exits by itself after shutdown (%s preparation)',
    async (mode) => {
      const { code, output } = await run(mode);
      expect(code).toBe(0);
      const report = JSON.parse(output) as {
        before: { running: number };
        after: { running: number; kept: number };
        calls: string[];
        waiterError: string;
      };
      expect(report.before.running).toBe(1);
      expect(report.after).toMatchObject({ running: 0, kept: 0 });
      expect(report.calls).toEqual(mode === 'pending' ? [] : ['start', 'aborted']);
      if (mode === 'waiting') expect(report.waiterError).toBe('aborted');
    },
    180_000,
  );
});

/** `n` tool rounds: a request, a call, its 600-character result, a reply (~760 tokens a round). */
function toolTurns(n: number): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `Q${i} `.padEnd(60, 'q') });
    out.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'grep', arguments: `{"q":"${i}"}` } }],
    });
    out.push({ role: 'tool', tool_call_id: `c${i}`, content: `R${i} `.padEnd(600, 'r') });
    out.push({ role: 'assistant', content: `A${i} `.padEnd(60, 'a') });
  }
  return out;
}

describe('background at the trigger: cheap levels first (issue 28)', () => {
  it('does not wait for a running preparation when clearing old tool results reaches the target', async () => {
    const summarizer = new GatedSummarizer(); // never released: a wait would never end
    const manager = mk(summarizer);
    const history = toolTurns(14);
    await manager.preflight('s', history.slice(0, 4 * 10)); // 7,4xx tokens: preparing
    await nextTurn();
    expect(manager.backgroundStatus()).toMatchObject({ started: 1, running: 1 });
    const turns = async (n: number) => {
      for (let k = 0; k < n; k++) await nextTurn();
      return 'waited' as const;
    };
    const result = await Promise.race([manager.compact('s', history.slice(0, 4 * 12)), turns(50)]);
    expect(result).not.toBe('waited');
    if (result === 'waited') return;
    expect(result.applied).toBe(true);
    expect(result.levels.map((level) => level.level)).toEqual(['clear_tool_results']);
    expect(result.tokensAfter).toBeLessThanOrEqual(manager.policy.targetPct * 10_000);
    expect(result.version).toBe(0);
    // The preparation goes on, for the trigger that needs it.
    expect(manager.backgroundStatus()).toMatchObject({ started: 1, running: 1, used: 0 });
    await manager.shutdown();
  });
});

describe('background over long tool-heavy sessions', () => {
  it.each(['raw history', 'persisted view'])(
    'stays under budget, swaps prepared summaries and keeps versions consecutive (%s)',
    async (mode) => {
      const messages = syntheticSession({
        turns: 160,
        seed: 13,
        toolDensity: 3,
        parallelRate: 0.3,
        resultChars: 500,
      });
      const turnEnds: number[] = [];
      messages.forEach((m, k) => {
        if (k > 0 && m.role === 'user') turnEnds.push(k);
      });
      turnEnds.push(messages.length);
      const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000, background: true });
      let view: unknown[] = [];
      let previousEnd = 0;
      let version = 0;
      let compactions = 0;
      let cheapOnly = 0;
      for (const end of turnEnds) {
        const input =
          mode === 'raw history' ? messages.slice(0, end) : [...view, ...messages.slice(previousEnd, end)];
        const result = await manager.compact('s', input);
        expect(result.tokensAfter).toBeLessThanOrEqual(manager.budget);
        if (result.applied) {
          compactions++;
          // A trigger the cheap levels settle keeps the version; a summary moves it by one.
          expect([version, version + 1]).toContain(result.version);
          if (result.version === version) cheapOnly++;
        } else expect(result.version).toBe(version);
        version = result.version;
        view = result.messages;
        previousEnd = end;
        // The model call: background work runs meanwhile.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      const status = manager.backgroundStatus();
      expect(compactions).toBeGreaterThanOrEqual(5);
      expect(status.used).toBeGreaterThanOrEqual(3);
      expect(compactions - cheapOnly).toBeGreaterThanOrEqual(3);
      await manager.shutdown();
      expect(manager.backgroundStatus().running).toBe(0);
    },
    300_000,
  );
});
