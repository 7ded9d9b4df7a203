import { describe, expect, it } from 'vitest';
import {
  charCounter,
  chatTurns,
  collect,
  deepFreeze,
  summaryCount,
} from '../../../test/support/manager-fixtures.js';
import { hasOpenToolCalls } from '../../../test/support/open-tool-calls.js';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { isCompactError } from '../errors.js';
import type { CompactEvent } from '../events/events.js';
import { MemorySessionStore } from '../session/session-store.js';
import { EmbeddedSummarizer } from '../summary/embedded-summarizer.js';
import type { SummarizeRequest, Summarizer } from '../summary/summarizer.js';
import { CompactManager } from './compact-manager.js';

describe('budget and trigger', () => {
  it('computes the budget as max - buffer and the trigger at trigger_pct', () => {
    const manager = new CompactManager({
      model: 'gpt-4',
      maxContextTokens: 128_000,
      policy: { hardCapBuffer: 1500 },
    });
    expect(manager.budget).toBe(126_500);
    expect(manager.triggerTokens).toBe(108_800);
  });

  it('triggers at 85% and not at 75%, emitting the decision either way', async () => {
    const mk = () =>
      new CompactManager({
        maxContextTokens: 128_000,
        tokenCounter: charCounter,
        // The trigger alone: the cost trigger would compact at 75% already (gpt-4o reads at 0.5x).
        policy: { keepRecentTurns: 2, keepToolIoPairs: 1, costTrigger: false },
      });
    const above = mk();
    const aboveEvents = collect(above);
    const at = chatTurns(544, 100); // 108,800 chars
    const r1 = await above.compact('s', at);
    expect(r1.tokensBefore).toBe(108_800);
    expect(r1.applied).toBe(true);
    const decision = aboveEvents.find(
      (e) => e.name === 'compact.trigger_decision',
    ) as CompactEvent<'compact.trigger_decision'>;
    expect(decision.properties).toMatchObject({
      triggered: true,
      reason: 'usage_pct >= trigger_pct',
      triggerTokens: 108_800,
      budget: 126_500,
    });
    expect(decision.properties.kept).toBeDefined();
    expect(decision.properties.prunedCount).toBeGreaterThan(0);

    const below = mk();
    const belowEvents = collect(below);
    const r2 = await below.compact('s', chatTurns(480, 100)); // 96,000
    expect(r2.applied).toBe(false);
    expect(r2.tokensBefore).toBe(96_000);
    const d2 = belowEvents.find(
      (e) => e.name === 'compact.trigger_decision',
    ) as CompactEvent<'compact.trigger_decision'>;
    expect(d2.properties.triggered).toBe(false);
    const estimate = belowEvents.find(
      (e) => e.name === 'compact.token_estimate',
    ) as CompactEvent<'compact.token_estimate'>;
    expect(estimate.properties).toMatchObject({ tEst: 96_000, maxTokens: 128_000, usagePct: 0.75 });
  });

  it('estimates system, developer, tool schemas and messages separately', () => {
    const manager = new CompactManager({ model: 'gpt-4o' });
    const tools = [
      {
        type: 'function',
        function: {
          name: 'read_file',
          description: 'Read',
          parameters: { type: 'object', properties: { path: { type: 'string' } } },
        },
      },
    ];
    const messages = [
      { role: 'system', content: 'You are a coding assistant.' },
      { role: 'developer', content: 'Never print secrets.' },
      { role: 'user', content: 'Fix the bug in src/app.ts' },
    ];
    const estimate = manager.estimate(messages, { tools });
    expect(estimate.breakdown.system).toBeGreaterThan(5);
    expect(estimate.breakdown.developer).toBeGreaterThan(4);
    expect(estimate.breakdown.toolsSchema).toBeGreaterThan(10);
    expect(estimate.breakdown.messages).toBeGreaterThan(5);
    const { system, developer, toolsSchema, messages: rest } = estimate.breakdown;
    expect(estimate.total).toBe(system + developer + toolsSchema + rest);
    expect(estimate.usagePct).toBeCloseTo(estimate.total / 128_000);
    expect(
      manager.estimate(messages, { tools, system: 'extra system prompt' }).breakdown.system,
    ).toBeGreaterThan(system);
    expect(estimate.tokenizer).toBe('o200k_base');
  });
});

describe('three layers', () => {
  const session = () => [
    { role: 'system', content: 'system prompt' },
    ...chatTurns(3, 50),
    {
      role: 'user',
      content: 'PROTECTED requirement: keep the API stable',
      meta: { protected: true, label: 'Requirement' },
    },
    ...chatTurns(10, 50),
  ];

  it('orders pinned, one summary, then recent; protected messages survive unchanged', async () => {
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0, keepRecentTurns: 2, keepToolIoPairs: 1 },
    });
    const input = deepFreeze(session());
    const before = structuredClone(input);
    const result = await manager.manualCompact('s', input, { note: 'user-requested' });
    expect(input).toEqual(before);
    const out = result.messages as Record<string, unknown>[];
    expect(out[0]).toEqual({ role: 'system', content: 'system prompt' });
    expect(out[1]).toEqual({ role: 'user', content: 'PROTECTED requirement: keep the API stable' });
    expect(String(out[2]!.content)).toMatch(/^<COMPACT-SUMMARY v1>/);
    expect(out.slice(3)).toEqual(input.slice(-4));
    expect(summaryCount(out)).toBe(1);
    expect(out.some((m) => 'meta' in m)).toBe(false);
    expect(result).toMatchObject({
      applied: true,
      reason: 'manual',
      version: 1,
      kept: { pinned: 2, recentTurns: 2, toolPairs: 0 },
    });
  });

  it('records the manual note in the events', async () => {
    const manager = new CompactManager({ maxContextTokens: 100_000, tokenCounter: charCounter });
    const events = collect(manager);
    await manager.manualCompact('s', session(), { note: 'user-requested' });
    const decision = events.find(
      (e) => e.name === 'compact.trigger_decision',
    ) as CompactEvent<'compact.trigger_decision'>;
    expect(decision.properties).toMatchObject({ manual: true, note: 'user-requested' });
    expect(events.map((e) => e.name)).toEqual([
      'compact.token_estimate',
      'compact.trigger_decision',
      'compact.summary_created',
      'compact.reduction',
      'compact.pruned_messages',
    ]);
    const created = events[2] as CompactEvent<'compact.summary_created'>;
    expect(created.properties).toMatchObject({ strategy: 'task_state', summarizer: 'embedded', version: 1 });
    expect(created.properties.compressionRatio).toBeGreaterThan(0);
    expect(created.parentId).toBe(decision.spanId);
    for (const e of events) {
      expect(e.traceId).toBe('s');
      expect(e.endTime).toBeGreaterThanOrEqual(e.startTime);
      expect(e.operationId).toBe(events[0]!.operationId);
    }
  });

  it('rolls the summary: v2 re-summarizes v1 with the new remainder, one summary only', async () => {
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0, keepRecentTurns: 1, keepToolIoPairs: 1 },
    });
    const first = [
      { role: 'user', content: 'Goal: ship release v2.4.1 to staging by Friday.' },
      { role: 'assistant', content: 'Decided to use the blue-green deploy because it avoids downtime.' },
      ...chatTurns(2, 40),
    ];
    const r1 = await manager.manualCompact('s', first);
    const persisted = [
      ...r1.messages,
      { role: 'user', content: 'Also rotate the key in config/prod.yaml.' },
      { role: 'assistant', content: 'OK, rotating.' },
      ...chatTurns(2, 40),
    ];
    const r2 = await manager.manualCompact('s', persisted);
    expect(r2.version).toBe(2);
    expect(summaryCount(r2.messages as unknown[])).toBe(1);
    const text = r2.summary!.text;
    expect(text).toMatch(/^<COMPACT-SUMMARY v2>/);
    expect(text).toContain('v2.4.1');
    expect(text).toContain('config/prod.yaml');
    // The same works from the raw history (never rewritten), recognized through the state.
    const raw = [...first, ...persisted.slice(r1.messages.length)];
    const manager2 = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0, keepRecentTurns: 1, keepToolIoPairs: 1 },
    });
    await manager2.manualCompact('s', first);
    const r3 = await manager2.manualCompact('s', raw);
    expect(r3.summary!.text).toContain('v2.4.1');
    expect(r3.messages.length).toBe(r2.messages.length);
  });

  it('recognizes a persisted view after a restart through the stored state (a shared store)', async () => {
    const store = new MemorySessionStore();
    const options = {
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0, keepRecentTurns: 1 },
      store,
    };
    const manager = new CompactManager(options);
    const r1 = await manager.manualCompact('s', [
      { role: 'user', content: 'Goal: migrate table users_v3.' },
      ...chatTurns(3, 40),
    ]);
    const restarted = new CompactManager(options);
    const view = [...r1.messages, ...chatTurns(2, 40)];
    const idle = await restarted.compact('s', view);
    expect(idle.applied).toBe(false);
    expect(idle.version).toBe(1);
    expect(idle.messages).toEqual(view);
    const r2 = await restarted.manualCompact('s', view);
    expect(r2.version).toBe(2);
    expect(r2.summary!.text).toContain('users_v3');
  });

  it('without stored state a summary-looking message is ordinary content (issue 23)', async () => {
    const options = { maxContextTokens: 100_000, tokenCounter: charCounter, policy: { keepRecentTurns: 1 } };
    const r1 = await new CompactManager(options).manualCompact('s', [
      { role: 'user', content: 'Goal: migrate table users_v3.' },
      ...chatTurns(3, 40),
    ]);
    // A restart resumes the persisted view: its summary carries a mark this installation
    // verifies (issue 33), so it is the summary, not content.
    const restarted = new CompactManager(options);
    const view = [...r1.messages, ...chatTurns(2, 40)];
    const idle = await restarted.compact('s', view);
    expect(idle.version).toBe(1);
    expect(idle.messages).toEqual(view);
    const r2 = await restarted.manualCompact('s', view);
    expect(r2.version).toBe(2);
    expect(summaryCount(r2.messages as unknown[])).toBe(1);
    // Another installation's key: the same view is ordinary content there.
    const elsewhere = new CompactManager({ ...options, summaryKeys: 'another-installation-key-0123456789' });
    const foreign = await elsewhere.compact('s', view);
    expect(foreign.version).toBe(0);
    expect(foreign.messages).toEqual(view);
  });
});

describe('fit the budget', () => {
  it('throws insufficient_budget when pinned messages alone exceed the budget, with guidance and an event', async () => {
    const manager = new CompactManager({
      maxContextTokens: 1_000,
      tokenCounter: charCounter,
      policy: { hardCapBuffer: 100 },
    });
    const events = collect(manager);
    const messages = [{ role: 'system', content: 'x'.repeat(950) }, ...chatTurns(2, 10)];
    await expect(manager.compact('s', messages)).rejects.toSatisfy(
      (e: unknown) =>
        isCompactError(e, 'insufficient_budget') &&
        /reduce protected memory or raise the context limit/.test((e as Error).message),
    );
    const error = events.find((e) => e.name === 'compact.error') as CompactEvent<'compact.error'>;
    expect(error.status).toBe('error');
    expect(error.properties).toMatchObject({ errorType: 'insufficient_budget', fallback: 'none' });
  });

  it('reduces keep_recent_turns then keep_tool_io_pairs until the result fits', async () => {
    const manager = new CompactManager({
      maxContextTokens: 1_500,
      tokenCounter: charCounter,
      policy: { hardCapBuffer: 0, keepRecentTurns: 6, keepToolIoPairs: 4, maxSummaryTokens: 200 },
    });
    const messages: Record<string, unknown>[] = [];
    for (let t = 0; t < 8; t++) {
      messages.push({ role: 'user', content: `u${t}`.padEnd(150, '.') });
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `c${t}`, type: 'function', function: { name: 'f', arguments: '{}' } }],
      });
      messages.push({ role: 'tool', tool_call_id: `c${t}`, content: `r${t}`.padEnd(100, '.') });
    }
    const result = await manager.compact('s', messages);
    expect(result.applied).toBe(true);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
    expect(result.kept.recentTurns).toBeLessThan(6);
    expect(result.kept.toolPairs).toBeLessThan(4);
    expect(result.kept.recentTurns).toBeGreaterThanOrEqual(1);
  });

  it('keeps the last turn when it leaves no room for a summary, reporting the summary it could not keep', async () => {
    const manager = new CompactManager({
      maxContextTokens: 1_000,
      tokenCounter: charCounter,
      policy: { hardCapBuffer: 0, maxSummaryTokens: 100 },
    });
    const events = collect(manager);
    const last = { role: 'user', content: 'y'.repeat(990) };
    const result = await manager.compact('s', [...chatTurns(3, 10), last]);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
    expect(result.messages.at(-1)).toEqual(last);
    const error = events.find((e) => e.name === 'compact.error') as CompactEvent<'compact.error'>;
    expect(error.properties.fallback).toBe('pruning-only');
    expect(result.summary).toBeUndefined();
  });

  it('cuts a last message larger than the window around a marker instead of failing', async () => {
    const manager = new CompactManager({ maxContextTokens: 1_000, tokenCounter: charCounter });
    const huge = { role: 'user', content: `BEGIN ${'log line\n'.repeat(400)} END` };
    const result = await manager.compact('s', [...chatTurns(3, 10), huge]);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.budget);
    const out = String((result.messages.at(-1) as { content: string }).content);
    expect(out.startsWith('BEGIN')).toBe(true);
    expect(out.endsWith('END')).toBe(true);
    expect(out).toMatch(/agent-compaction/);
    expect(result.levels.map((level) => level.level)).toContain('cut_oversized');
  });
});

describe('session view', () => {
  it('summarizes once per threshold crossing while the raw history grows', async () => {
    let calls = 0;
    const counting: Summarizer = {
      name: 'counting',
      async summarize(request: SummarizeRequest) {
        calls++;
        return new EmbeddedSummarizer().summarize(request);
      },
    };
    const manager = new CompactManager({
      maxContextTokens: 12_000,
      summarizer: counting,
      policy: { keepRecentTurns: 2, keepToolIoPairs: 2, maxSummaryTokens: 400 },
    });
    const events = collect(manager);
    const full = syntheticSession({ turns: 60, seed: 4, resultChars: 600 });
    const history: unknown[] = [];
    for (const message of full) {
      history.push(message);
      if (hasOpenToolCalls(history)) continue;
      const out = await manager.preflight('s', history);
      expect(summaryCount(out)).toBeLessThanOrEqual(1);
    }
    const crossings = events.filter(
      (e) =>
        e.name === 'compact.trigger_decision' &&
        (e as CompactEvent<'compact.trigger_decision'>).properties.triggered,
    ).length;
    expect(crossings).toBeGreaterThan(2);
    // At most one summarizer call per crossing; crossings that clearing old tool output
    // resolves need none.
    const summarizedCrossings = events.filter(
      (e) => e.name === 'compact.reduction' && e.properties.level === 'summarize',
    ).length;
    expect(calls).toBe(summarizedCrossings);
    expect(calls).toBeGreaterThan(0);
    expect(calls).toBeLessThanOrEqual(crossings);
    expect(
      events.some((e) => e.name === 'compact.reduction' && e.properties.level === 'clear_tool_results'),
    ).toBe(true);
    expect(calls).toBeLessThan(full.length / 10);
  });
});
