/**
 * The shrunk counterexamples of compaction-properties.test.ts (seeds of a property soak), run
 * deterministically: each failed the same way on every run before its fix.
 */
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { StrategyName } from '../../src/core/summary/summarizer.js';
import { checkOutput } from './support/check-output.js';
import { renderSession } from './support/render-session.js';
import type { SessionStep, WireFormat } from './support/session-model.js';
import { deepFreeze, SUMMARY_PREFIX, wireFacts } from './support/wire-facts.js';

interface Policy {
  maxContextTokens: number;
  hardCapBuffer: number;
  triggerPct: number;
  keepRecentTurns: number;
  keepToolIoPairs: number;
  maxSummaryTokens: number;
}

const manager = ({ maxContextTokens, ...policy }: Policy) =>
  new CompactManager({
    model: 'gpt-4o',
    maxContextTokens,
    policy: { ...policy, rolesNeverPrune: [], strategy: 'task_state' as StrategyName },
  });

/** The property test's preflight loop: one step more per call, raw history or the returned view. */
async function loop(format: WireFormat, steps: SessionStep[], policy: Policy, mode: 'raw' | 'view') {
  const session = renderSession(format, steps);
  deepFreeze(session.messages);
  const m = manager(policy);
  const outputs: { raw: unknown[]; output: unknown[] }[] = [];
  let view: readonly unknown[] = [];
  for (let s = 0; s < steps.length; s++) {
    const raw = session.messages.slice(0, session.stepStarts[s + 1]);
    const added = session.messages.slice(session.stepStarts[s], session.stepStarts[s + 1]);
    const output = await m.preflight(`loop-${mode}`, deepFreeze(mode === 'raw' ? raw : [...view, ...added]), {
      format,
    });
    outputs.push({ raw, output });
    view = deepFreeze(output);
  }
  return outputs;
}

const summaryAt = (format: WireFormat, output: readonly unknown[]) =>
  output.findIndex((m) => wireFacts(format, m).text.startsWith(SUMMARY_PREFIX));

const tools = (results: number[], protectedAt = -1, more: Partial<SessionStep> = {}): SessionStep =>
  ({
    kind: 'tools',
    results,
    protectedAt,
    reasoning: false,
    unknownItem: false,
    text: 0,
    resultsInOneMessage: false,
    ...more,
  }) as SessionStep;
const user = (isProtected: boolean): SessionStep => ({
  kind: 'user',
  words: 1,
  protected: isProtected,
  parts: false,
  repeat: true,
});

describe('anthropic: a protected newest user turn stays in the verbatim suffix, after the summary', () => {
  // Seed 501085876: the summary first, then the verbatim suffix [user text + image, the
  // protected user turn, the answer]. The checker read the first user message as "the
  // user's words kept before the pinned head" and so the pinned turn as misplaced.
  it('forced compaction (seed 501085876)', async () => {
    const steps: SessionStep[] = [
      tools([1]),
      tools([1]),
      { kind: 'unknown', words: 1 },
      user(true),
      { kind: 'assistant', words: 1, protected: false, reasoning: false },
    ];
    const session = renderSession('anthropic', steps);
    const input = deepFreeze(session.messages);
    const m = manager({
      maxContextTokens: 1519,
      hardCapBuffer: 0,
      triggerPct: 0.3,
      keepRecentTurns: 1,
      keepToolIoPairs: 1,
      maxSummaryTokens: 54,
    });
    const result = await m.compact('seed-501085876', input, { format: 'anthropic', force: true });
    const shape = checkOutput({
      format: 'anthropic',
      raw: input,
      output: result.messages,
      rolesNeverPrune: [],
    });
    // Summary, then raw 4..6 in history order (the protected raw 5 keeps its place).
    expect(shape.rawIndices).toEqual([-1, 4, 5, 6]);
  });

  // Seeds 684880245 and 919490872: the protected user turn is the newest message, so it goes
  // last, after the summary and the user's messages before it.
  it.each([
    ['684880245', 0],
    ['919490872', 1],
  ])('seed %s: history growing one step per call (text words %s)', async (_seed, text) => {
    const steps: SessionStep[] = [
      tools([1], -1, { text }),
      { kind: 'unknown', words: 1 },
      user(false),
      user(true),
      tools([1], 0, { text }),
    ];
    const policy = {
      maxContextTokens: 2500,
      hardCapBuffer: 0,
      triggerPct: 0.3,
      keepRecentTurns: 1,
      keepToolIoPairs: 1,
      maxSummaryTokens: 32,
    };
    for (const mode of ['raw', 'view'] as const) {
      const outputs = await loop('anthropic', steps, policy, mode);
      let compacted = 0;
      for (const { raw, output } of outputs) {
        const shape = checkOutput({ format: 'anthropic', raw, output, rolesNeverPrune: [] });
        if (shape.summaries === 1) {
          compacted++;
          expect(shape.rawIndices.slice(0, 2), mode).toEqual([-1, 2]);
          expect(shape.rawIndices.at(-1), mode).toBe(raw.length - 1);
        }
      }
      expect(compacted, mode).toBeGreaterThan(0);
    }
  });
});

describe('openai-responses: reasoning pinned by the protected message after it', () => {
  // Seed 2049367676: a protected assistant message pins the reasoning item before it. That
  // reasoning item was remembered as a pin of its own, and a remembered reasoning item pins its
  // whole round, so a rebuilt view also pinned the round's two unknown items after the message
  // (sent before the summary); a view built once from the same history did not.
  const steps: SessionStep[] = [
    { kind: 'assistant', words: 1, protected: false, reasoning: false },
    tools([1], -1, { text: 1 }),
    tools([139], -1, { unknownItem: true }),
    { kind: 'assistant', words: 172, protected: true, reasoning: true },
    { kind: 'unknown', words: 1 },
    { kind: 'unknown', words: 1 },
    { kind: 'pinned-role', role: 'system', words: 1 },
    tools([145, 513, 239], -1, { reasoning: true, unknownItem: true }),
  ];
  const policy = {
    maxContextTokens: 2500,
    hardCapBuffer: 300,
    triggerPct: 0.3,
    keepRecentTurns: 1,
    keepToolIoPairs: 2,
    maxSummaryTokens: 38,
  };

  it('the view loop sends the same pinned head as the raw loop, the unknown items after the summary', async () => {
    const [raw, view] = await Promise.all([
      loop('openai-responses', steps, policy, 'raw'),
      loop('openai-responses', steps, policy, 'view'),
    ]);
    const last = view.at(-1)!;
    const ids = last.output.map((m) => (m as { id?: string }).id);
    const summary = summaryAt('openai-responses', last.output);
    expect(summary).toBeGreaterThan(0);
    expect(ids.slice(0, summary)).toEqual(['rs_8', 'msg_8']);
    expect(ids.indexOf('x_10')).toBeGreaterThan(summary);
    expect(ids.indexOf('x_11')).toBeGreaterThan(summary);
    // The raw loop folds the two unknown items into the summary; before the summary it sends
    // the same pinned head.
    const rawLast = raw.at(-1)!.output;
    expect(rawLast.slice(0, summaryAt('openai-responses', rawLast))).toEqual(last.output.slice(0, summary));
    for (const { raw: history, output } of view)
      checkOutput({ format: 'openai-responses', raw: history, output, rolesNeverPrune: [] });
  });
});
