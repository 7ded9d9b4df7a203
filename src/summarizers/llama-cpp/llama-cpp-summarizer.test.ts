import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleMessages, sampleRequest } from '../../../test/fixtures/summarizers/sample-session.js';
import type { SummarizerErrorReport } from '../../core/summary/summarizer.js';
import { writeTinyGguf } from '../../testing/write-tiny-gguf.js';
import { resilientSummarizer } from '../resilient-summarizer.js';
import { isUsableSummary, type LlamaCppSummarizer, llamaCppSummarizer } from './llama-cpp-summarizer.js';

// A short prompt: the tiny model's vocabulary spells most text byte by byte.
const prompts = { default: { name: 'tiny', system: 'Summarize.', template: 'History:\n{content}' } };
const countTokens = (text: string) => Buffer.byteLength(text);
const request = (overrides = {}) =>
  sampleRequest({ messages: sampleMessages().slice(0, 2), maxTokens: 24, countTokens, ...overrides });

describe('llamaCppSummarizer with a random-weight GGUF generated at test time', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tiny-gguf-'));
  const modelPath = join(dir, 'tiny-random-llama.gguf');
  let accepting: LlamaCppSummarizer;
  let strict: LlamaCppSummarizer;

  beforeAll(() => {
    writeTinyGguf(modelPath, { seed: 7 });
    accepting = llamaCppSummarizer({
      modelPath,
      contextSize: 4096,
      prompts,
      isUsable: () => true,
      threads: 2,
    });
    strict = llamaCppSummarizer({ modelPath, contextSize: 4096, prompts, threads: 2 });
  });
  afterAll(async () => {
    await accepting?.dispose();
    await strict?.dispose();
  });

  it('loads the model, prompts it and bounds generation by maxTokens', async () => {
    expect(existsSync(modelPath)).toBe(true);
    const result = await accepting.summarize(request());
    expect(accepting.name).toBe('llama-cpp:tiny-random-llama.gguf');
    expect(result.model).toBe('tiny-random-llama.gguf');
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.usage!.outputTokens).toBeGreaterThan(0);
    expect(result.usage!.outputTokens).toBeLessThanOrEqual(24);
    expect(result.usage!.inputTokens).toBeGreaterThan(100);
  });

  it('is deterministic with seed and temperature 0', async () => {
    const first = await accepting.summarize(request());
    const second = await accepting.summarize(request());
    expect(second.text).toBe(first.text);
  });

  it('rejects unusable (random) output as summarizer_failed, so the manager falls back', async () => {
    const reports: SummarizerErrorReport[] = [];
    // The test is about the output check, not time: no limit a loaded machine could reach.
    const error = await resilientSummarizer(strict, { timeoutMs: 600_000, totalTimeoutMs: 600_000 })
      .summarize(request({ reportError: (r: SummarizerErrorReport) => reports.push(r) }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'summarizer_failed',
      message: expect.stringContaining('not a usable summary'),
    });
  });

  it('aborts generation at the timeout', async () => {
    const error = await resilientSummarizer(accepting, { timeoutMs: 30 })
      .summarize(request({ maxTokens: 4000, countTokens: () => 1 }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'summarizer_timeout' });
  });

  it('fails fast on a missing model file, and after dispose loads again', async () => {
    const missing = llamaCppSummarizer({ modelPath: join(dir, 'missing.gguf') });
    await expect(missing.summarize(request())).rejects.toMatchObject({ code: 'summarizer_failed' });
    await accepting.dispose();
    expect((await accepting.summarize(request())).text.length).toBeGreaterThan(0);
    expect(() => llamaCppSummarizer({ modelPath: '' })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
  });
});

describe('isUsableSummary', () => {
  it('accepts prose and markdown, rejects empty, binary and replacement-character output', () => {
    expect(isUsableSummary('## Goals\n- Migrate billing to Postgres 15 (BILL-2207).')).toBe(true);
    expect(isUsableSummary('')).toBe(false);
    expect(isUsableSummary('\u0014\u0002\u0001\u0003\u0004')).toBe(false);
    expect(isUsableSummary('aa\uFFFD on and of service goal')).toBe(false);
    expect(isUsableSummary('1234 5678 !!!')).toBe(false);
  });
});

const liveModel = process.env.COMPACT_GGUF_MODEL;
describe.skipIf(!liveModel)('llamaCppSummarizer with a real model (COMPACT_GGUF_MODEL)', () => {
  it('writes a task_state summary that keeps the planted facts', async () => {
    const local = llamaCppSummarizer({ modelPath: liveModel!, contextSize: 8192 });
    try {
      const result = await local.summarize(sampleRequest({ maxTokens: 400 }));
      expect(result.text).toContain('feat/pg15');
    } finally {
      await local.dispose();
    }
  });
});
if (!liveModel)
  console.info('[llama-cpp] live model test skipped: set COMPACT_GGUF_MODEL to a GGUF file to run it');
