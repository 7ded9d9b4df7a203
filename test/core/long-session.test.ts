/**
 * Long-session and soak tests of issue 2: a session three times the window, a 1,000-session
 * soak, and compaction as a view (point 7): summarizations happen once per threshold
 * crossing of the view, never once per call.
 */
import { describe, expect, it } from 'vitest';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { EmbeddedSummarizer } from '../../src/core/summary/embedded-summarizer.js';
import type { SummarizeRequest, SummarizeResult, Summarizer } from '../../src/core/summary/summarizer.js';
import { seededRandom, syntheticSession } from '../../src/testing/synthetic-session.js';
import { hasOpenToolCalls } from '../support/open-tool-calls.js';
import { FULL_SCALE, scaled } from '../support/test-scale.js';
import { checkOutput } from './support/check-output.js';
import { deepFreeze } from './support/wire-facts.js';

/** Wraps the embedded summarizer and records every call. */
class CountingSummarizer implements Summarizer {
  readonly name = 'counting';
  readonly #inner = new EmbeddedSummarizer();
  calls = 0;
  /** Ids of every message handed to the summarizer, in order. */
  readonly summarizedIds: string[] = [];
  readonly inputSizes: number[] = [];
  /** Per call: how many of the messages handed over hold a `[cleared: ...]` placeholder. */
  readonly clearedInputs: number[] = [];

  async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
    this.calls++;
    this.inputSizes.push(request.messages.length);
    this.clearedInputs.push(
      request.messages.filter((message) =>
        message.toolResults.some((result) => result.output.startsWith('[cleared:')),
      ).length,
    );
    for (const message of request.messages) this.summarizedIds.push(message.id);
    return this.#inner.summarize(request);
  }
}

/** Splits a chat session into its pinned head and its turns (each starts at a user message). */
function splitTurns(messages: Record<string, unknown>[]): {
  head: Record<string, unknown>[];
  turns: Record<string, unknown>[][];
} {
  const head: Record<string, unknown>[] = [];
  const turns: Record<string, unknown>[][] = [];
  for (const message of messages) {
    if (message.role === 'user') turns.push([message]);
    else if (turns.length === 0) head.push(message);
    else turns[turns.length - 1]!.push(message);
  }
  return { head, turns };
}

/**
 * The session three times the window: a 128k window under `test:full`, a 32k one (a quarter of
 * the turns, the same shape) under `npm test`, where the 128k run alone takes minutes.
 */
const THREE_WINDOWS = FULL_SCALE ? { window: 128_000, turns: 330 } : { window: 32_000, turns: 83 };

describe('a session three times the window', () => {
  let finalRequest = '';
  it('compacts several times through preflight after every message and ends under budget', async () => {
    const messages = deepFreeze(
      syntheticSession({ seed: 384, turns: THREE_WINDOWS.turns, toolDensity: 3, resultChars: 1_400 }),
    );
    const window = THREE_WINDOWS.window;
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: window });
    const rawTotal = manager.estimate(messages).total;
    expect(rawTotal, 'the raw history is about three windows').toBeGreaterThanOrEqual(3 * window);
    expect(rawTotal).toBeLessThan(4 * window);

    let compactions = 0;
    const versions: number[] = [];
    manager.on('compact.pruned_messages', (event) => {
      compactions++;
      versions.push(event.properties.version);
    });
    let last: unknown[] = [];
    let overBudget = 0;
    for (let n = 1; n <= messages.length; n++) {
      // Only what a model call is sent: a prefix ending in unanswered calls is not.
      if (hasOpenToolCalls(messages.slice(0, n))) continue;
      last = await manager.preflight('three-windows', messages.slice(0, n));
      if (n % 25 === 0 || n === messages.length) {
        if (manager.estimate(last).total > manager.budget) overBudget++;
      }
    }
    expect(overBudget).toBe(0);
    expect(compactions, 'several compactions').toBeGreaterThanOrEqual(3);
    // Versions only go up, by one per summarization; compactions that only cleared old tool
    // output keep the version.
    for (let k = 1; k < versions.length; k++) expect(versions[k]! - versions[k - 1]!).toBeOneOf([0, 1]);
    const summaries = versions.at(-1)!;
    expect(summaries, 'at least one summarization').toBeGreaterThanOrEqual(1);
    const final = manager.estimate(last);
    expect(final.total).toBeLessThanOrEqual(manager.budget);
    const shape = checkOutput({
      format: 'openai-chat',
      raw: messages,
      output: last,
      rolesNeverPrune: ['system', 'developer'],
    });
    expect(shape.summaries).toBe(1);
    expect(shape.summaryText).toMatch(new RegExp(`^<COMPACT-SUMMARY v${summaries}>`));
    finalRequest = JSON.stringify(last);
  });

  // Issue 20: the opening request reaches the model after every re-summarization, kept
  // verbatim as the user's own text or folded into the summary's first section.
  it('the goal and success criteria of the first message survive every re-summarization', () => {
    expect(finalRequest).toContain('Goal: implement token rotation in src/api/routes.ts');
    // "Success criteria: all tests in test/auth.test.ts pass and p95 latency stays under 120 ms."
    expect(finalRequest).toContain('test/auth.test.ts');
    expect(finalRequest).toContain('120 ms');
  });
});

describe('soak', () => {
  const sessions = scaled(1_000, 60);
  it(`${sessions} sessions with varied tool density, result sizes and policies: zero failures`, async () => {
    const rand = seededRandom(1_000);
    const failures: string[] = [];
    let compactions = 0;
    for (let s = 0; s < sessions; s++) {
      const options = {
        seed: 10_000 + s,
        turns: 3 + Math.floor(rand() * 9),
        toolDensity: Math.floor(rand() * 7),
        resultChars: 100 + Math.floor(rand() * 1_600),
        parallelRate: rand() * 0.6,
        pinned: rand() < 0.8,
      };
      const maxContextTokens = 5_000 + Math.floor(rand() * 15_000);
      const policy = {
        triggerPct: 0.5 + Math.round(rand() * 45) / 100,
        hardCapBuffer: Math.floor(maxContextTokens * rand() * 0.15),
        keepRecentTurns: 1 + Math.floor(rand() * 7),
        keepToolIoPairs: 1 + Math.floor(rand() * 5),
        maxSummaryTokens: 128 + Math.floor(rand() * 600),
        strategy: (['task_state', 'brief', 'decision_log', 'code_delta'] as const)[s % 4]!,
      };
      const messages = deepFreeze(syntheticSession(options));
      const { head, turns } = splitTurns(messages);
      const manager = new CompactManager({
        model: s % 5 === 0 ? 'gpt-4' : 'gpt-4o',
        maxContextTokens,
        policy,
      });
      manager.on('compact.pruned_messages', () => compactions++);
      const raw: Record<string, unknown>[] = [...head];
      let view: unknown[] = [...head];
      const persisted = s % 2 === 1;
      try {
        for (const turn of turns) {
          raw.push(...turn);
          const input = persisted ? [...view, ...turn] : [...raw];
          view = await manager.preflight(`soak-${s}`, input);
          // The full structural check on every fourth call keeps the soak within seconds.
          if (raw.length % 4 === 0 || turn === turns[turns.length - 1]) {
            checkOutput({
              format: 'openai-chat',
              raw,
              output: view,
              rolesNeverPrune: ['system', 'developer'],
            });
          }
          const tokens = manager.estimate(view).total;
          if (tokens > manager.budget)
            throw new Error(`request of ${tokens} tokens over the budget ${manager.budget}`);
        }
      } catch (error) {
        failures.push(
          `session ${s} ${JSON.stringify({ options, maxContextTokens, policy, persisted })}: ${isCompactError(error) ? error.code : ''} ${(error as Error).message.slice(0, 300)}`,
        );
      }
    }
    expect(failures.slice(0, 5)).toEqual([]);
    expect(failures.length).toBe(0);
    expect(compactions, 'the soak exercises compaction').toBeGreaterThan(sessions * 0.3);
  });
});

interface ViewRun {
  calls: number;
  crossings: number;
  triggeredDecisions: number;
  summarizations: number;
  summarizedIds: string[];
  maxFresh: number;
  maxRewritten: number;
  maxTurnSize: number;
  lastView: unknown[];
  raw: unknown[];
  budget: number;
  manager: CompactManager;
  /** Per call: the view's estimate before compacting, whether it triggered, and the view sent (its marks blanked). */
  perCall: { tEst: number; triggered: boolean; sent: string }[];
  /** Per summarization: the messages handed over that hold a cleared placeholder. */
  clearedInputs: number[];
}

/** Turns through preflight per view run: 1,000 under `test:full`, 400 under `npm test`. */
const VIEW_TURNS = scaled(1_000, 400);

/** One run per mode, shared by the tests below (each takes minutes on a slow machine). */
const viewRuns = new Map<'raw' | 'persisted', Promise<ViewRun>>();
function viewRun(mode: 'raw' | 'persisted'): Promise<ViewRun> {
  const run = viewRuns.get(mode) ?? runView(mode);
  viewRuns.set(mode, run);
  return run;
}

async function runView(mode: 'raw' | 'persisted'): Promise<ViewRun> {
  const session = deepFreeze(
    syntheticSession({ seed: 7, turns: VIEW_TURNS, toolDensity: 1.2, resultChars: 500 }),
  );
  const { head, turns } = splitTurns(session);
  const summarizer = new CountingSummarizer();
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 16_000,
    summarizer,
    // Crossings of the trigger alone (the cost trigger compacts below it, by its own rule).
    policy: { hardCapBuffer: 1_000, costTrigger: false },
  });
  // Crossings are counted from the estimate events alone: the view's tokens against the trigger.
  let crossings = 0;
  let triggeredDecisions = 0;
  let maxFresh = 0;
  let calls = 0;
  const perCall: { tEst: number; triggered: boolean; sent: string }[] = [];
  manager.on('compact.token_estimate', (event) => {
    if (perCall.length < calls) perCall.push({ tEst: event.properties.tEst, triggered: false, sent: '' });
    if (event.properties.tEst >= manager.triggerTokens || event.properties.tEst > manager.budget) crossings++;
    if (calls > 1) maxFresh = Math.max(maxFresh, event.properties.countedFresh);
  });
  manager.on('compact.trigger_decision', (event) => {
    if (event.properties.triggered) triggeredDecisions++;
    if (event.properties.triggered && perCall[calls - 1]) perCall[calls - 1]!.triggered = true;
  });
  // Messages one compaction rewrote (cleared, shortened, cut) and may keep in the view.
  let maxRewritten = 0;
  let rewritten = 0;
  manager.on('compact.reduction', (event) => {
    if (event.properties.level !== 'summarize') rewritten += event.properties.count;
  });
  manager.on('compact.summary_created', () => {
    maxRewritten = Math.max(maxRewritten, rewritten);
    rewritten = 0;
  });
  const raw: unknown[] = [...head];
  let view: unknown[] = [...head];
  let maxTurnSize = 0;
  for (const turn of turns) {
    maxTurnSize = Math.max(maxTurnSize, turn.length);
    raw.push(...turn);
    calls++;
    view = await manager.preflight(`view-${mode}`, mode === 'raw' ? [...raw] : [...view, ...turn]);
    deepFreeze(view);
    // The request as sent, its summary mark blanked (the mark is bound to the session id).
    perCall[calls - 1]!.sent = JSON.stringify(view).replace(/\[summary-mark \d+\]/g, '[summary-mark]');
  }
  return {
    calls,
    crossings,
    triggeredDecisions,
    summarizations: summarizer.calls,
    summarizedIds: summarizer.summarizedIds,
    maxFresh,
    maxRewritten,
    maxTurnSize,
    lastView: view,
    raw,
    budget: manager.budget,
    perCall,
    clearedInputs: summarizer.clearedInputs,
    manager,
  };
}

describe.each(['raw', 'persisted'] as const)('compaction as a view (%s history)', (mode) => {
  it('summarizes once per threshold crossing of the view, not once per call', async () => {
    const run = await viewRun(mode);
    expect(run.calls).toBe(VIEW_TURNS);
    expect(run.crossings, 'the view crosses the threshold repeatedly').toBeGreaterThanOrEqual(10);
    expect(run.crossings, 'far fewer crossings than calls').toBeLessThan(run.calls / 5);
    expect(run.summarizations).toBe(run.crossings);
    expect(run.triggeredDecisions).toBe(run.crossings);
    // Incremental: every message is summarized at most once (the previous summary carries the rest).
    expect(new Set(run.summarizedIds).size).toBe(run.summarizedIds.length);
    expect(run.summarizedIds.length).toBeLessThan(run.raw.length);
    // A call counts only what is new: the new turn, and after a compaction the new summary
    // message and at most one rewritten (cleared or cut) message. A caller that sends the
    // view back (persisted) sends the kept placeholders as objects of its own: counted once.
    expect(run.maxFresh).toBeLessThanOrEqual(
      run.maxTurnSize + 2 + (mode === 'persisted' ? run.maxRewritten : 0),
    );
    expect(run.manager.estimate(run.lastView).total).toBeLessThanOrEqual(run.budget);
    const shape = checkOutput({
      format: 'openai-chat',
      raw: run.raw,
      output: run.lastView,
      rolesNeverPrune: ['system', 'developer'],
    });
    expect(shape.summaries).toBe(1);
    expect(shape.summaryText).toMatch(new RegExp(`^<COMPACT-SUMMARY v${run.summarizations}>`));
  });
});

describe('compaction as a view: both modes agree', () => {
  // The modes hand the summarizer different messages by design: from the raw history a cleared
  // tool result is rebuilt from its original (run-cascade.ts, summarizerMessage), while a
  // persisted view holds only the `[cleared: ...]` placeholder the caller sent back (the
  // original is no longer there). From the second summary on, the summaries differ in content,
  // and so by a token or two in size, and a later crossing may fall one call apart. What must
  // hold: the same request is counted the same and decided the same, and the counts agree.
  it('the raw-history and persisted-view modes count and decide the same request the same', async () => {
    const [raw, persisted] = [await viewRun('raw'), await viewRun('persisted')];
    expect(raw.perCall).toHaveLength(raw.calls);
    expect(persisted.perCall).toHaveLength(persisted.calls);
    let sameRequests = 0;
    for (let call = 1; call < raw.calls; call++) {
      // The same request before this call's turn (the turn is the same in both modes).
      if (raw.perCall[call - 1]!.sent !== persisted.perCall[call - 1]!.sent) break;
      sameRequests++;
      expect(persisted.perCall[call]!.tEst, `call ${call}`).toBe(raw.perCall[call]!.tEst);
      expect(persisted.perCall[call]!.triggered, `call ${call}`).toBe(raw.perCall[call]!.triggered);
    }
    // The first summary is written from the same messages in both modes (nothing cleared yet).
    expect(raw.clearedInputs[0]).toBe(0);
    expect(persisted.clearedInputs[0]).toBe(0);
    expect(sameRequests, 'the modes send the same requests through the first summaries').toBeGreaterThan(
      raw.perCall.findIndex((call) => call.triggered),
    );
    // Raw history: the summarizer never sees a placeholder; the persisted view's does.
    expect(raw.clearedInputs.every((count) => count === 0)).toBe(true);
    expect(persisted.clearedInputs.some((count) => count > 0)).toBe(true);
    expect(Math.abs(persisted.summarizations - raw.summarizations)).toBeLessThanOrEqual(1);
  });
});
