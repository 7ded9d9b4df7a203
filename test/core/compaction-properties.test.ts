/**
 * Property tests of issue 2 ("How it is checked"): over random sessions in the three wire
 * formats, random protected and system/developer messages, random policies and windows,
 * forced compactions and preflight loops keep every invariant.
 *
 * Reproduce a failure with the seed fast-check prints: FC_SEED=<seed> npx vitest run test/core
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { StrategyName } from '../../src/core/summary/summarizer.js';
import { scaled } from '../support/test-scale.js';
import { checkOutput } from './support/check-output.js';
import { renderSession } from './support/render-session.js';
import { type SessionStep, sessionArbitrary, type WireFormat } from './support/session-model.js';
import { deepFreeze } from './support/wire-facts.js';

const SEED = Number(process.env.FC_SEED ?? 20_250_611);
const RUNS = Number(process.env.FC_RUNS ?? scaled(100, 20));
const FORMATS: WireFormat[] = ['openai-chat', 'openai-responses', 'anthropic'];

function params<T>(): fc.Parameters<T> {
  return {
    seed: SEED,
    numRuns: RUNS,
    reporter: (details) => {
      if (details.failed) {
        throw new Error(
          `${fc.defaultReportMessage(details)}\n(fixed seed ${SEED}; rerun with FC_SEED=${SEED})\nCause: ${String((details.errorInstance as Error | undefined)?.message ?? details.errorInstance).slice(0, Number(process.env.FC_CAUSE_CHARS ?? 2_000))}`,
        );
      }
    },
  };
}

interface RandomPolicy {
  maxContextTokens: number;
  hardCapBuffer: number;
  triggerPct: number;
  keepRecentTurns: number;
  keepToolIoPairs: number;
  maxSummaryTokens: number;
  rolesNeverPrune: string[];
  strategy: StrategyName;
  withTools: boolean;
}

const policyArbitrary = (minContext: number, maxContext: number): fc.Arbitrary<RandomPolicy> =>
  fc
    .record({
      maxContextTokens: fc.integer({ min: minContext, max: maxContext }),
      bufferShare: fc.integer({ min: 0, max: 30 }),
      triggerPct: fc.integer({ min: 30, max: 100 }).map((n) => n / 100),
      keepRecentTurns: fc.integer({ min: 1, max: 8 }),
      keepToolIoPairs: fc.integer({ min: 1, max: 6 }),
      maxSummaryTokens: fc.integer({ min: 32, max: 800 }),
      rolesNeverPrune: fc.constantFrom<string[]>([], ['system'], ['developer'], ['system', 'developer']),
      strategy: fc.constantFrom<StrategyName>('task_state', 'brief', 'decision_log', 'code_delta'),
      withTools: fc.boolean(),
    })
    .map(({ bufferShare, ...p }) => ({
      ...p,
      hardCapBuffer: Math.floor((p.maxContextTokens * bufferShare) / 100),
    }));

function managerFor(policy: RandomPolicy): CompactManager {
  return new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: policy.maxContextTokens,
    policy: {
      triggerPct: policy.triggerPct,
      hardCapBuffer: policy.hardCapBuffer,
      keepRecentTurns: policy.keepRecentTurns,
      keepToolIoPairs: policy.keepToolIoPairs,
      maxSummaryTokens: policy.maxSummaryTokens,
      rolesNeverPrune: policy.rolesNeverPrune,
      strategy: policy.strategy,
    },
  });
}

function requestOptions(format: WireFormat, session: ReturnType<typeof renderSession>, policy: RandomPolicy) {
  return {
    format,
    ...(policy.withTools ? { tools: deepFreeze(session.tools) } : {}),
    ...(session.system !== undefined ? { system: session.system } : {}),
  };
}

describe.each(FORMATS)('%s: forced compaction', (format) => {
  it(`keeps every invariant over ${RUNS} random sessions (seed ${SEED})`, async () => {
    const stats = { compacted: 0, insufficient: 0, withSummary: 0, withPinned: 0 };
    await fc.assert(
      fc.asyncProperty(sessionArbitrary(), policyArbitrary(1_500, 40_000), async (steps, policy) => {
        const session = renderSession(format, steps);
        const input = deepFreeze(session.messages);
        const before = structuredClone(input);
        const manager = managerFor(policy);
        const options = requestOptions(format, session, policy);
        let result: Awaited<ReturnType<CompactManager['compact']>>;
        try {
          result = await manager.compact('property', input, { ...options, force: true });
        } catch (error) {
          if (!isCompactError(error, 'insufficient_budget')) throw error;
          stats.insufficient++;
          expect(input).toEqual(before);
          return;
        }
        stats.compacted++;
        expect(input).toEqual(before);
        const shape = checkOutput({
          format,
          raw: input,
          output: result.messages,
          rolesNeverPrune: policy.rolesNeverPrune,
        });
        if (shape.summaries === 1) {
          stats.withSummary++;
          expect(result.summary?.text).toBe(shape.summaryText);
          expect(shape.summaryText).toMatch(new RegExp(`^<COMPACT-SUMMARY v${result.version}>`));
        }
        if (result.kept.pinned > 0) stats.withPinned++;
        const estimate = manager.estimate(result.messages, options);
        expect(estimate.total, 'the compacted request fits the budget').toBeLessThanOrEqual(manager.budget);
        expect(result.budget).toBe(policy.maxContextTokens - policy.hardCapBuffer);
        expect(result.applied).toBe(true);
      }),
      params(),
    );
    // The generator must exercise the interesting cases, not only the throwing ones.
    expect(stats.compacted).toBeGreaterThanOrEqual(RUNS / 2);
    expect(stats.withSummary).toBeGreaterThanOrEqual(RUNS / 4);
    expect(stats.withPinned).toBeGreaterThan(0);
  });
});

describe('forced compaction reports', () => {
  it(`tokensAfter equals the re-estimated tokens of the returned messages (seed ${SEED})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FORMATS),
        sessionArbitrary({ maxSteps: 30 }),
        policyArbitrary(3_000, 30_000),
        async (format, steps, policy) => {
          const session = renderSession(format, steps);
          const manager = managerFor(policy);
          const options = requestOptions(format, session, policy);
          const result = await manager
            .compact('report', deepFreeze(session.messages), { ...options, force: true })
            .catch((error) => {
              if (isCompactError(error, 'insufficient_budget')) return undefined;
              throw error;
            });
          if (!result) return;
          expect(result.tokensAfter).toBe(manager.estimate(result.messages, options).total);
          expect(result.tokensBefore).toBe(manager.estimate(session.messages, options).total);
        },
      ),
      params(),
    );
  });
});

async function preflightLoop(
  format: WireFormat,
  steps: SessionStep[],
  policy: RandomPolicy,
  mode: 'raw' | 'view',
) {
  const session = renderSession(format, steps);
  deepFreeze(session.messages);
  const manager = managerFor(policy);
  const options = requestOptions(format, session, policy);
  let view: readonly unknown[] = [];
  let summaries = 0;
  let maxVersion = 0;
  for (let s = 0; s < steps.length; s++) {
    const raw = session.messages.slice(0, session.stepStarts[s + 1]);
    const added = session.messages.slice(session.stepStarts[s], session.stepStarts[s + 1]);
    const input = deepFreeze(mode === 'raw' ? raw : [...view, ...added]);
    const before = structuredClone(input);
    let output: unknown[];
    try {
      output = await manager.preflight(`loop-${mode}`, input, options);
    } catch (error) {
      if (!isCompactError(error, 'insufficient_budget')) throw error;
      expect(input).toEqual(before);
      return { summaries, maxVersion, stoppedEarly: true };
    }
    expect(input).toEqual(before);
    const shape = checkOutput({ format, raw, output, rolesNeverPrune: policy.rolesNeverPrune });
    summaries = Math.max(summaries, shape.summaries);
    if (shape.summaryText)
      maxVersion = Math.max(maxVersion, Number(/^<COMPACT-SUMMARY v(\d+)>/.exec(shape.summaryText)![1]));
    const estimate = manager.estimate(output, options);
    expect(estimate.total, `step ${s}: the request fits the budget`).toBeLessThanOrEqual(manager.budget);
    view = deepFreeze(output);
  }
  return { summaries, maxVersion, stoppedEarly: false };
}

describe.each(FORMATS)('%s: preflight loops', (format) => {
  it.each(['raw', 'view'] as const)(
    `%s history growing one step per call keeps every invariant (${RUNS} runs, seed ${SEED})`,
    async (mode) => {
      let compactedTwice = 0;
      await fc.assert(
        fc.asyncProperty(
          sessionArbitrary({ maxSteps: 60, maxWords: 200, maxResultWords: 600 }),
          policyArbitrary(2_500, 9_000),
          async (steps, policy) => {
            const outcome = await preflightLoop(format, steps, policy, mode);
            if (outcome.maxVersion >= 2) compactedTwice++;
          },
        ),
        params(),
      );
      expect(compactedTwice, 'some sessions compact several times').toBeGreaterThan(RUNS / 10);
    },
  );
});
