import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProviderTestServer, startProviderTestServer } from '../../testing/provider-test-server.js';
import { isCompactError } from '../errors.js';
import { CompactManager } from '../manager/compact-manager.js';
import { countFromLastUsage, UsageCalibration } from './usage-calibration.js';

describe('UsageCalibration', () => {
  it('leaves counts unchanged before usage, then scales by the ratio reported / estimated', () => {
    const calibration = new UsageCalibration();
    expect(calibration.adjust('s', 1000)).toBe(1000);
    expect(calibration.ratio('s')).toBeUndefined();
    calibration.record('s', { estimatedTokens: 10_000, reportedTokens: 8_000 });
    expect(calibration.ratio('s')).toBe(0.8);
    expect(calibration.adjust('s', 12_000)).toBe(9_600);
    // Running ratio: half the newest sample.
    calibration.record('s', { estimatedTokens: 10_000, reportedTokens: 9_000 });
    expect(calibration.ratio('s')).toBeCloseTo(0.85, 10);
    expect(calibration.adjust('other', 12_000)).toBe(12_000);
  });

  it('counts an extending request as last reported + calibrated estimate of the difference', () => {
    const calibration = new UsageCalibration();
    expect(calibration.countExtending('s', 5000)).toBe(5000);
    calibration.record('s', { estimatedTokens: 10_000, reportedTokens: 8_000 });
    expect(calibration.countExtending('s', 11_000)).toBe(8_800);
    expect(countFromLastUsage({ lastReported: 9_000, lastEstimate: 10_000, nowEstimate: 10_500 })).toBe(
      9_500,
    );
    expect(countFromLastUsage({ lastReported: 100, lastEstimate: 10_000, nowEstimate: 0 })).toBe(0);
  });

  it('count: exact counters and sessions without usage keep the estimate; others build on the last report', () => {
    const calibration = new UsageCalibration();
    expect(calibration.count('s', 5000, false)).toEqual({ tokens: 5000, estimatedTokens: 5000 });
    calibration.record('s', { estimatedTokens: 10_000, reportedTokens: 8_000 });
    expect(calibration.count('s', 11_000, true)).toEqual({ tokens: 11_000, estimatedTokens: 11_000 });
    expect(calibration.count('s', 11_000, false)).toEqual({
      tokens: 8_800,
      estimatedTokens: 11_000,
      lastReportedTokens: 8_000,
      ratio: 0.8,
    });
  });

  it('two reports in a row outside the band at one ratio, for requests of different sizes, restart the calibration', () => {
    // FC_SEED=47 of the sound-requests property (anthropic: stream, a loopback provider counting
    // 4 characters of the body per token): the session's first request (78 tokens estimated, 108
    // reported) set a ratio of 1.38; every later report, at 0.48 of the estimate, was left out,
    // so a 22 337-token estimate counted 30 929 (the provider's 2.9 times) and the cascade cut a
    // newest tool result that fit the window whole.
    const calibration = new UsageCalibration();
    calibration.record('s', { estimatedTokens: 78, reportedTokens: 108 });
    expect(calibration.record('s', { estimatedTokens: 2162, reportedTokens: 1051 }).lastRejected).toBe(true);
    const confirmed = calibration.record('s', { estimatedTokens: 3078, reportedTokens: 1483 });
    expect(confirmed).toMatchObject({ samples: 1, rejected: 1, last: { estimatedTokens: 3078 } });
    expect(confirmed.lastRejected).toBeUndefined();
    expect(calibration.ratio('s')).toBeCloseTo(1483 / 3078, 10);
    expect(calibration.count('s', 22_337, false).tokens).toBe(
      Math.ceil(1483 + (22_337 - 3078) * (1483 / 3078)),
    );
    // Not a provider's way of counting: a constant report (its ratio moves with the size), or
    // two requests of about one size (a repeated glitch).
    const liar = new UsageCalibration();
    liar.record('l', { estimatedTokens: 4000, reportedTokens: 4000 });
    expect(liar.record('l', { estimatedTokens: 4000, reportedTokens: 100 }).lastRejected).toBe(true);
    expect(liar.record('l', { estimatedTokens: 5000, reportedTokens: 100 }).lastRejected).toBe(true);
    expect(liar.record('l', { estimatedTokens: 5100, reportedTokens: 100 }).lastRejected).toBe(true);
    expect(liar.ratio('l')).toBe(1);
  });

  it('takes no growth ratio from two requests whose growth is far from the whole ratio (a rewrite between them)', () => {
    // FC_SEED=9 of the sound-requests property (anthropic: create): between two compacted
    // requests the estimate grew by 188 tokens and the report by 549 (a ratio of 2.92 where the
    // whole ratio was 0.49); it scaled every later count of the session, and the cascade cut a
    // newest tool result that fit the window whole.
    // The same figures in the band: growth of 188 estimated, 549 reported, whole ratio 0.55.
    const calibration = new UsageCalibration();
    calibration.record('s', { estimatedTokens: 5000, reportedTokens: 2750 });
    calibration.record('s', { estimatedTokens: 7124, reportedTokens: 3918 });
    expect(calibration.state('s')?.marginalRatio).toBeCloseTo(1168 / 2124, 10);
    calibration.record('s', { estimatedTokens: 7312, reportedTokens: 4467 });
    expect(calibration.state('s')?.marginalRatio).toBeCloseTo(1168 / 2124, 10);
    expect(calibration.count('s', 20_723, false).tokens).toBe(
      Math.ceil(4467 + (20_723 - 7312) * (1168 / 2124)),
    );
  });

  it('pairs reported usage with the estimate noted when the request was sent', () => {
    const calibration = new UsageCalibration();
    expect(calibration.recordReported('s', 900)).toBeUndefined();
    calibration.noteSent('s', 1000);
    expect(calibration.recordReported('s', 900)).toMatchObject({ ratio: 0.9, samples: 1 });
  });

  it('clamps absurd ratios, ignores zero samples, forgets the least recently used session', () => {
    // With the mismatch band wide open, a 1000x report is used but clamped to maxCorrection.
    const wide = new UsageCalibration({ mismatchBand: 10_000 });
    wide.record('a', { estimatedTokens: 100, reportedTokens: 100_000 });
    expect(wide.ratio('a')).toBe(3);
    const calibration = new UsageCalibration({ maxSessions: 2 });
    // With the default band (2x) it is left out: the estimate stays in force.
    expect(calibration.record('a', { estimatedTokens: 100, reportedTokens: 100_000 }).lastRejected).toBe(
      true,
    );
    expect(calibration.ratio('a')).toBeUndefined();
    calibration.record('b', { estimatedTokens: 0, reportedTokens: 50 });
    expect(calibration.ratio('b')).toBeUndefined();
    calibration.record('c', { estimatedTokens: 100, reportedTokens: 50 });
    expect(calibration.state('a')).toBeUndefined();
    expect(calibration.ratio('c')).toBe(0.5);
    calibration.forget('c');
    expect(calibration.ratio('c')).toBeUndefined();
  });

  it('measures growth only from the report of the request just before (issue 43: jumps)', () => {
    // Figures of the Anthropic jump run: the first reports fell outside the band and were left
    // out; the first one used must not be read as growth from a left-out report (its 0 tokens):
    // 2,584 reported for 1,061 estimated tokens of growth made a marginal ratio of 2.44, and the
    // next request (15,717 estimated, provider ratio ~0.52) was counted 28,936.
    const calibration = new UsageCalibration();
    calibration.record('s', { estimatedTokens: 3_836, reportedTokens: 1_845 });
    calibration.record('s', { estimatedTokens: 4_248, reportedTokens: 2_058 });
    const used = calibration.record('s', { estimatedTokens: 4_897, reportedTokens: 2_584 });
    expect(used.marginalRatio).toBeUndefined();
    expect(calibration.count('s', 15_717, false).tokens).toBeLessThan(15_717 * 0.6);
    // A left-out report between two used ones: the growth spans requests the session never
    // measured (a rewind, a switch), so it is not a marginal ratio either.
    calibration.record('s', { estimatedTokens: 1_681, reportedTokens: 937 });
    expect(calibration.record('s', { estimatedTokens: 2_977, reportedTokens: 300 }).lastRejected).toBe(true);
    const after = calibration.record('s', { estimatedTokens: 1_926, reportedTokens: 993 });
    expect(after.marginalRatio).toBeUndefined();
    const next = calibration.record('s', { estimatedTokens: 2_926, reportedTokens: 1_513 });
    expect(next.marginalRatio).toBeCloseTo(0.52, 2);
  });

  it('rejects bad figures and options with typed errors naming the field', () => {
    const calibration = new UsageCalibration();
    for (const bad of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
      let caught: unknown;
      try {
        calibration.record('s', { estimatedTokens: 10, reportedTokens: bad });
      } catch (error) {
        caught = error;
      }
      expect(isCompactError(caught, 'invalid_config')).toBe(true);
      expect((caught as Error).message).toContain('usage.reportedTokens');
    }
    expect(() => new UsageCalibration({ weight: 0 })).toThrow(/calibration.weight/);
    expect(() => new UsageCalibration({ maxCorrection: 0.5 })).toThrow(/calibration.maxCorrection/);
    expect(() => countFromLastUsage({ lastReported: -5, lastEstimate: 0, nowEstimate: 0 })).toThrow(
      /lastReported/,
    );
  });
});

// ---------------------------------------------------------------------------------------
// Calibration against a provider whose tokenizer differs from the local one.

const requireHere = createRequire(import.meta.url);
type Encoder = { countTokens(text: string): number };
const cl100k = requireHere('gpt-tokenizer/encoding/cl100k_base') as Encoder;
const o200k = requireHere('gpt-tokenizer/encoding/o200k_base') as Encoder;

/** Real tool outputs and prompts: the contents of the vendored SWE-agent transcripts. */
function realTexts(): string[] {
  const texts: string[] = [];
  for (const name of ['swe-agent-pydicom', 'swe-agent-marshmallow', 'swe-agent-ctf']) {
    const url = new URL(`../../../test/fixtures/transcripts/${name}.json`, import.meta.url);
    for (const m of JSON.parse(readFileSync(url, 'utf8')) as { content?: unknown }[]) {
      if (typeof m.content === 'string' && m.content.length > 40) texts.push(m.content.slice(0, 6000));
    }
  }
  return texts;
}

/** Every string in a request body except keys: what a provider tokenizes. */
function bodyText(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) bodyText(v, out);
  else if (value !== null && typeof value === 'object')
    for (const v of Object.values(value)) bodyText(v, out);
  return out;
}

/** The provider's own count: its tokenizer over the request, 5 tokens per message, 7 per request. */
function providerCount(body: unknown, tokenize: (text: string) => number): number {
  const b = body as { messages: unknown[]; system?: unknown; tools?: unknown[] };
  let total = 7 + tokenize(bodyText(b.system).join('\n')) + tokenize(JSON.stringify(b.tools ?? []));
  for (const message of b.messages) total += 5 + tokenize(bodyText(message).join('\n'));
  return total;
}

interface Run {
  rawErrors: number[];
  calibratedErrors: number[];
  ratioOnlyErrors: number[];
  /** (reported - calibrated) / reported: positive when the calibrated count is short. */
  calibratedUnder: number[];
}

const relative = (estimate: number, reported: number) => Math.abs(estimate - reported) / reported;

/**
 * A 30-step tool loop: before each call, the local estimate (o200k x1.25) is calibrated from
 * the usage the server reported for the previous call; the server's report for this call
 * says how far off each figure was.
 */
async function runLoop(
  steps: number,
  send: (messages: unknown[], step: number) => Promise<number>,
  grow: (messages: unknown[], step: number, output: string) => void,
  estimate: (messages: unknown[]) => number,
): Promise<Run> {
  const texts = realTexts();
  const calibration = new UsageCalibration();
  const messages: unknown[] = [];
  grow(
    messages,
    -1,
    'Fix the failing test in pydicom: the DS value is not rounded. Start by reading the code.',
  );
  const run: Run = { rawErrors: [], calibratedErrors: [], ratioOnlyErrors: [], calibratedUnder: [] };
  for (let step = 0; step < steps; step++) {
    const estimated = estimate(messages);
    const calibrated = calibration.countExtending('s', estimated);
    const ratioOnly = calibration.adjust('s', estimated);
    const reported = await send(messages, step);
    if (step > 0) {
      run.rawErrors.push(relative(estimated, reported));
      run.calibratedErrors.push(relative(calibrated, reported));
      run.calibratedUnder.push((reported - calibrated) / reported);
      run.ratioOnlyErrors.push(relative(ratioOnly, reported));
    }
    calibration.record('s', { estimatedTokens: estimated, reportedTokens: reported });
    grow(messages, step, texts[step % texts.length]!);
  }
  return run;
}

const TOOLS_OPENAI = [
  {
    type: 'function' as const,
    function: {
      name: 'bash',
      description: 'Run a shell command in the repository',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
  },
];
const TOOLS_ANTHROPIC = [
  {
    name: 'bash',
    description: 'Run a shell command in the repository',
    input_schema: {
      type: 'object' as const,
      properties: { command: { type: 'string' } },
      required: ['command'],
    },
  },
];
const SYSTEM = 'You are an autonomous programmer working in a repository. Use the bash tool.';

describe('calibration against a provider that counts with another tokenizer', () => {
  let server: ProviderTestServer;
  let tokenize: (text: string) => number = cl100k.countTokens;
  beforeAll(async () => {
    server = await startProviderTestServer({
      handler: (request) => ({
        toolCalls: [{ name: 'bash', arguments: { command: `cat src/file_${request.seq}.py` } }],
        usage: { inputTokens: providerCount(request.body, tokenize), outputTokens: 20 },
      }),
    });
  });
  afterAll(async () => {
    await server.close();
  });

  const max = (values: number[]) => Math.max(...values);
  /**
   * From the second reported usage on (one sample cannot tell fixed costs such as tool
   * schemas from per-token differences), every next request is estimated within 2%; the
   * estimate after the first sample is within 15% and never under the report by more than 2%.
   */
  const expectCalibrated = (run: Run) => {
    expect(mean(run.rawErrors)).toBeGreaterThan(0.05);
    expect(run.calibratedErrors[0]).toBeLessThan(0.15);
    expect(run.calibratedUnder[0]).toBeLessThan(0.02);
    expect(max(run.calibratedErrors.slice(1))).toBeLessThan(0.02);
  };
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

  it('Anthropic SDK, cl100k on the server: the next request is estimated within 2% after calibration', async () => {
    tokenize = (text) => cl100k.countTokens(text);
    const client = new Anthropic({ baseURL: server.anthropicBaseURL, apiKey: 'sk-ant-test', maxRetries: 0 });
    const manager = new CompactManager({ model: 'claude-sonnet-4-6' });
    const run = await runLoop(
      30,
      async (messages) => {
        const reply = await client.messages.create({
          model: 'claude-sonnet-4-6',
          max_tokens: 1024,
          system: SYSTEM,
          tools: TOOLS_ANTHROPIC,
          messages: messages as Anthropic.MessageParam[],
        });
        const u = reply.usage;
        return u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
      },
      (messages, step, output) => {
        if (step < 0) {
          messages.push({ role: 'user', content: output });
          return;
        }
        const id = 'toolu_0'; // reused every turn, as some agents do
        messages.push({
          role: 'assistant',
          content: [{ type: 'tool_use', id, name: 'bash', input: { command: `cat src/file_${step}.py` } }],
        });
        messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: output }] });
      },
      (messages) => manager.estimate(messages, { system: SYSTEM, tools: TOOLS_ANTHROPIC }).total,
    );
    console.log(
      `calibration (anthropic, cl100k server): raw estimate error mean ${(100 * mean(run.rawErrors)).toFixed(1)}% max ${(100 * max(run.rawErrors)).toFixed(1)}%; ratio only mean ${(100 * mean(run.ratioOnlyErrors)).toFixed(2)}% max ${(100 * max(run.ratioOnlyErrors)).toFixed(2)}%; last usage + delta: after 1 sample ${(100 * run.calibratedErrors[0]!).toFixed(2)}%, then mean ${(100 * mean(run.calibratedErrors.slice(1))).toFixed(2)}% max ${(100 * max(run.calibratedErrors.slice(1))).toFixed(2)}%`,
    );
    expectCalibrated(run);
  });

  it('OpenAI SDK (a Gemini model behind an OpenAI-compatible API), o200k x1.13 on the server: within 2%', async () => {
    tokenize = (text) => Math.round(o200k.countTokens(text) * 1.13);
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
    const manager = new CompactManager({ model: 'gemini-2.5-flash' });
    const run = await runLoop(
      30,
      async (messages) => {
        const reply = await client.chat.completions.create({
          model: 'gemini-2.5-flash',
          messages: [
            { role: 'system', content: SYSTEM },
            ...(messages as OpenAI.ChatCompletionMessageParam[]),
          ],
          tools: TOOLS_OPENAI,
        });
        return reply.usage?.prompt_tokens ?? 0;
      },
      (messages, step, output) => {
        if (step < 0) {
          messages.push({ role: 'user', content: output });
          return;
        }
        const id = 'call_0';
        messages.push({
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id,
              type: 'function',
              function: { name: 'bash', arguments: JSON.stringify({ command: `cat src/file_${step}.py` }) },
            },
          ],
        });
        messages.push({ role: 'tool', tool_call_id: id, content: output });
      },
      (messages) =>
        manager.estimate([{ role: 'system', content: SYSTEM }, ...messages], { tools: TOOLS_OPENAI }).total,
    );
    console.log(
      `calibration (openai-compatible, o200k x1.13 server): raw estimate error mean ${(100 * mean(run.rawErrors)).toFixed(1)}% max ${(100 * max(run.rawErrors)).toFixed(1)}%; ratio only mean ${(100 * mean(run.ratioOnlyErrors)).toFixed(2)}% max ${(100 * max(run.ratioOnlyErrors)).toFixed(2)}%; last usage + delta: after 1 sample ${(100 * run.calibratedErrors[0]!).toFixed(2)}%, then mean ${(100 * mean(run.calibratedErrors.slice(1))).toFixed(2)}% max ${(100 * max(run.calibratedErrors.slice(1))).toFixed(2)}%`,
    );
    expectCalibrated(run);
  });
});
