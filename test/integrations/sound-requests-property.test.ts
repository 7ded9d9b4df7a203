/**
 * Issue 43 point 3: every request sound through every integration path, as a property.
 * Real SDK packages send over the loopback provider servers; the server records each request
 * and `checkSoundRequest` (agent-compaction/testing) judges it against the history the caller
 * held. Two kinds of cases:
 * - tool loops of 40+ steps after one user message, run by each SDK (outputs from 1% to 25%
 *   of the window, some long arguments, a short or a long user message; the built-in or an LLM
 *   summarizer over loopback);
 * - histories that jump (grow, rewind, edit, fork, switch, reuse the session id, restart) sent
 *   through the paths that take a whole history per call;
 * - (issue 78 review) the summary beside the newest: a system prompt of half the window, so that
 *   the last resort's summary gives up lines for the newest (`summary_lines`: cut_oversized with
 *   summaryLinesGivenUp > 0), asserted per loop path; every request of every case is also
 *   checked for a well-formed summary (one, its mark line before the closing tag).
 * The loop paths include the proxy (Chat and Anthropic clients through `startProxy`).
 * The cascade levels each path reached are counted (from `compact.reduction` events, or the
 * result's levels); a level never reached on a path fails the last test, so a new level cannot
 * escape the suite. The table paths x levels and the random steps run are printed and written to
 * `sound-requests-table.json` in the OS temp folder. Deterministic: FC_SEED explores other seeds,
 * FC_RUNS runs more cases.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { JumpHistory, type JumpOp, jumpPaths } from '../support/sound-jump-drivers.js';
import { type LoopCase, LOOP_PATHS as SDK_LOOP_PATHS } from '../support/sound-loop-drivers.js';
import { LEVELS, Ledger, type Level, llmSummarizer, WINDOW } from '../support/sound-paths.js';
import { PROXY_LOOP_PATHS } from '../support/sound-proxy-drivers.js';

const SEED = Number(process.env.FC_SEED ?? 20_261_128);
const RUNS = Number(process.env.FC_RUNS ?? 1);
const ledger = new Ledger();
const LOOP_PATHS = { ...SDK_LOOP_PATHS, ...PROXY_LOOP_PATHS };

/**
 * One loop case: 40 to 46 steps; per step an output of 1% to 25% of the window (a few of 20-25%
 * always among them); long arguments (8-20%, shortened once old) every few steps, and one call
 * whose arguments alone are 65-80% of the window (cut while it is the latest).
 */
const loopCase = fc.record({
  steps: fc.integer({ min: 40, max: 46 }),
  outputPct: fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 5, maxLength: 11 }),
  bigPct: fc.array(fc.integer({ min: 20, max: 25 }), { minLength: 2, maxLength: 3 }),
  longEvery: fc.integer({ min: 3, max: 6 }),
  longPct: fc.array(fc.integer({ min: 8, max: 20 }), { minLength: 1, maxLength: 4 }),
  hugeAt: fc.integer({ min: 12, max: 30 }),
  hugePct: fc.integer({ min: 65, max: 80 }),
  promptTokens: fc.oneof(fc.integer({ min: 20, max: 200 }), fc.integer({ min: 1000, max: 2000 })),
  llm: fc.boolean(),
});

const tokensOf = (pct: number) => Math.round((pct * WINDOW) / 100);

function sizesOf(c: typeof loopCase extends fc.Arbitrary<infer T> ? T : never) {
  // Before the huge call, outputs of 1-6% pile up: old results to clear, old arguments to shorten.
  const outputs = [...c.outputPct, ...c.bigPct];
  const outputTokens = Array.from({ length: c.steps }, (_, k) =>
    tokensOf(k < c.hugeAt ? 1 + (outputs[k % outputs.length]! % 6) : outputs[k % outputs.length]!),
  );
  const noteTokens = Array.from({ length: c.steps }, (_, k) => {
    if (k === c.hugeAt) return tokensOf(c.hugePct);
    return k % c.longEvery === 1 ? tokensOf(c.longPct[k % c.longPct.length]!) : 0;
  });
  return { outputTokens, noteTokens };
}

/** The loop paths; the AI SDK's and LangChain's run once per OpenAI API (Chat, Responses). */
const LOOPS: { path: string; driver: string; api: LoopCase['api'] }[] = Object.keys(LOOP_PATHS).flatMap(
  (driver) =>
    driver.startsWith('ai-sdk') || driver.startsWith('langchain')
      ? (['chat', 'responses'] as const).map((api) => ({ path: `${driver} (${api})`, driver, api }))
      : [{ path: driver, driver, api: 'chat' as const }],
);

describe('tool loops of 40+ steps after one user message, every request sound', () => {
  it.each(LOOPS)('$path', async ({ path, driver, api }) => {
    await fc.assert(
      fc.asyncProperty(loopCase, async (c) => {
        const before = ledger.of(path).violations.length;
        const llm = c.llm ? await llmSummarizer() : undefined;
        try {
          await LOOP_PATHS[driver]!(ledger, {
            steps: c.steps,
            sizes: sizesOf(c),
            api,
            promptTokens: c.promptTokens,
            ...(llm ? { summarizer: llm.summarizer } : {}),
            // Half the runs under the default (cache-aware clearing, the cost trigger), half
            // under the 'quality' preset (clearing on every trigger): every level is reached.
            preset: c.hugeAt % 2 === 1 ? 'quality' : 'default',
            ledgerPath: path,
          });
        } catch (error) {
          ledger.of(path).violations.push(`threw: ${(error as Error).message.slice(0, 300)}`);
        } finally {
          await llm?.server.close();
        }
        const found = ledger.of(path).violations.slice(before);
        if (found.length > 0)
          throw new Error(`${found.length} unsound requests:\n${found.slice(0, 6).join('\n')}`);
      }),
      { seed: SEED + LOOPS.findIndex((loop) => loop.path === path), numRuns: RUNS, endOnFailure: true },
    );
  });
});

/**
 * The summary beside the newest message (the last resort's step before the cut): a system
 * prompt of about half the window, so that once the history is summarized a newest result of
 * 2% to 24% fits whole only when the summary gives up lines (its excerpts of old results). The
 * outputs sweep that range step by step, so some step lands where it fits that way.
 */
const trimCase = fc.record({
  steps: fc.integer({ min: 18, max: 24 }),
  systemPct: fc.integer({ min: 46, max: 54 }),
  offset: fc.nat(22),
  stride: fc.constantFrom(5, 7, 9, 11),
  quality: fc.boolean(),
});

/** A system prompt of plain rules, about `tokens` gpt-4o tokens (15 a rule). */
function systemPrompt(tokens: number): string {
  const rules = Array.from(
    { length: Math.round(tokens / 15) },
    (_, k) => `Rule ${k}: always follow the house style and keep every answer short.`,
  );
  return `You are an SRE agent; never restart a host. ${rules.join(' ')}`;
}

/**
 * Paths that cannot reach the trimming here. The Anthropic paths (an estimate calibrated from the
 * test server's usage, 4 characters a token) do: a system prompt of rules weighs about 1.6 times
 * the outputs per estimated token, and the hard limit scaled by the whole request's ratio left
 * requests up to 5.5% over the window by the server's count (issue 47ba review; fixed by the
 * marginal fit of `toLocal`).
 */
const TRIM_NOT_REACHED = [
  // Driven only by the jump histories, whose system prompt is short.
  'compactMessages',
];

describe('the summary gives up lines for the newest result, every request sound', () => {
  it.each(LOOPS)('$path', async ({ path, driver, api }) => {
    await fc.assert(
      fc.asyncProperty(trimCase, async (c) => {
        const before = ledger.of(path).violations.length;
        const reached = ledger.of(path).levels.summary_lines;
        try {
          await LOOP_PATHS[driver]!(ledger, {
            steps: c.steps,
            sizes: {
              outputTokens: Array.from({ length: c.steps }, (_, k) =>
                tokensOf(2 + ((c.offset + k * c.stride) % 23)),
              ),
              noteTokens: [0],
            },
            api,
            promptTokens: 60,
            system: systemPrompt(tokensOf(c.systemPct)),
            preset: c.quality ? 'quality' : 'default',
            ledgerPath: path,
          });
        } catch (error) {
          ledger.of(path).violations.push(`threw: ${(error as Error).message.slice(0, 300)}`);
        }
        const found = ledger.of(path).violations.slice(before);
        if (found.length > 0)
          throw new Error(`${found.length} unsound requests:\n${found.slice(0, 6).join('\n')}`);
        // Counted from the compact.reduction events (or the CLI's report) of this run.
        if (!TRIM_NOT_REACHED.includes(path))
          expect(
            ledger.of(path).levels.summary_lines,
            'cut_oversized with summaryLinesGivenUp > 0',
          ).toBeGreaterThan(reached);
      }),
      { seed: SEED + LOOPS.findIndex((loop) => loop.path === path), numRuns: RUNS, endOnFailure: true },
    );
  });
});

const opArbitrary: fc.Arbitrary<JumpOp> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('grow' as const),
      outputPct: fc.array(fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 15, max: 25 })), {
        maxLength: 4,
      }),
      notePct: fc.oneof(fc.constant(0), fc.integer({ min: 8, max: 25 })),
      hugePct: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: 65, max: 80 })),
      pastePct: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: 80, max: 95 })),
      answer: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.nat(40).map((at): JumpOp => ({ kind: 'rewind', at })) },
  { weight: 1, arbitrary: fc.nat(40).map((at): JumpOp => ({ kind: 'edit', at })) },
  { weight: 1, arbitrary: fc.constant<JumpOp>({ kind: 'fork' }) },
  { weight: 2, arbitrary: fc.constant<JumpOp>({ kind: 'switch' }) },
  { weight: 1, arbitrary: fc.constant<JumpOp>({ kind: 'reuse' }) },
  { weight: 1, arbitrary: fc.constant<JumpOp>({ kind: 'restart' }) },
);

const JUMP_PATHS = [
  'anthropic: create',
  'anthropic: stream',
  'anthropic: compactThreadHistory (manager)',
  'ai-sdk: generateText (chat)',
  'anthropic: compactThreadHistory (spec)',
  'cli: compact',
  'compactMessages',
];

describe('histories that jump, every request sound', () => {
  let run = 0;
  it(`${JUMP_PATHS.length} paths, the same ops each (${RUNS * 3} runs, seed ${SEED})`, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sound-jumps-'));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(opArbitrary, { minLength: 16, maxLength: 22 }),
          fc.boolean(),
          async (ops, llm) => {
            const server = await startProviderTestServer({ handler: () => ({ text: 'ok' }) });
            const summary = await llmSummarizer();
            const paths = jumpPaths({
              ledger,
              server,
              summaryServer: summary.server,
              summarizer: llm ? summary.summarizer : undefined,
              dir,
              run: run++,
            });
            const history = new JumpHistory();
            try {
              for (const op of ops) {
                const turns = history.apply(op);
                for (const path of paths) {
                  try {
                    await path.call(turns, op.kind === 'restart');
                  } catch (error) {
                    ledger
                      .of(path.name)
                      .violations.push(`after ${op.kind}: threw ${(error as Error).message.slice(0, 300)}`);
                  }
                }
              }
            } finally {
              for (const path of paths) await path.close();
              await server.close();
              await summary.server.close();
            }
          },
        ),
        { seed: SEED, numRuns: RUNS * 3 },
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each(JUMP_PATHS)('%s: no unsound request', (path) => {
    expect(ledger.of(path).violations.slice(0, 12)).toEqual([]);
  });
});

/**
 * Levels a path cannot show: the spec form's throwaway manager reports no levels, only whether it
 * summarized; compactMessages never lets protected results give way.
 */
const UNOBSERVABLE: Record<string, readonly Level[]> = {
  // compactMessages compacts to the target in one call with no session: it summarizes the
  // protected results rather than letting them give way (0 in 76 calls and 3 crafted histories).
  compactMessages: ['give_way_shorten', 'give_way_clear'],
  'anthropic: compactThreadHistory (spec)': [
    'clear',
    'shorten_arguments',
    'give_way_shorten',
    'give_way_clear',
    'cut_oversized',
    'summary_lines',
  ],
};

describe('cascade levels', () => {
  it('every path reached every level it can show', () => {
    const missing = [...ledger.paths].flatMap(([path, counts]) =>
      LEVELS.filter(
        (level) =>
          counts.levels[level] === 0 &&
          !UNOBSERVABLE[path]?.includes(level) &&
          !(level === 'summary_lines' && TRIM_NOT_REACHED.includes(path)),
      ).map((level) => `${path}: ${level}`),
    );
    expect(ledger.paths.size).toBe(LOOPS.length + JUMP_PATHS.length - 5);
    expect(missing).toEqual([]);
  });
});

afterAll(async () => {
  const rows = [...ledger.paths].map(([path, counts]) => ({
    path,
    ...counts.levels,
    requests: counts.requests,
    unsound: counts.violations.length,
  }));
  console.log(`sound requests (seed ${SEED}, ${ledger.steps} random steps checked):`);
  console.table(rows);
  await writeFile(
    join(tmpdir(), 'sound-requests-table.json'),
    JSON.stringify(
      {
        seed: SEED,
        runs: RUNS,
        steps: ledger.steps,
        rows,
        violations: Object.fromEntries([...ledger.paths].map(([p, c]) => [p, c.violations])),
      },
      null,
      2,
    ),
  );
});
