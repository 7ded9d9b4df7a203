import { describe, expect, it } from 'vitest';
import { sampleRequest } from '../../test/fixtures/summarizers/sample-session.js';
import { CompactError } from '../core/errors.js';
import type { SummarizeRequest, Summarizer, SummarizerErrorReport } from '../core/summarizer.js';
import { resilientSummarizer } from './resilient-summarizer.js';

function scripted(
  steps: ((request: SummarizeRequest) => Promise<string>)[],
): Summarizer & { calls: SummarizeRequest[] } {
  const calls: SummarizeRequest[] = [];
  return {
    name: 'scripted',
    calls,
    async summarize(request) {
      calls.push(request);
      const step = steps[Math.min(calls.length - 1, steps.length - 1)]!;
      return { text: await step(request), model: 'm' };
    },
  };
}

const fail = (code: ConstructorParameters<typeof CompactError>[0]) => async () => {
  throw new CompactError(code, code);
};

describe('resilientSummarizer', () => {
  it('passes a good summary through with the inner name', async () => {
    const inner = scripted([async () => 'fine']);
    const result = await resilientSummarizer(inner).summarize(sampleRequest());
    expect(result).toEqual({ summarizer: 'scripted', text: 'fine', model: 'm' });
    expect(inner.calls[0]!.signal).toBeInstanceOf(AbortSignal);
  });

  it('checks length with the request counter and halves maxTokens, recovering on the second retry', async () => {
    const inner = scripted([async () => 'x'.repeat(2000), async () => 'x'.repeat(2000), async () => 'short']);
    const reports: SummarizerErrorReport[] = [];
    const result = await resilientSummarizer(inner).summarize(
      sampleRequest({ maxTokens: 100, reportError: (r) => reports.push(r) }),
    );
    expect(result.text).toBe('short');
    expect(inner.calls.map((c) => c.maxTokens)).toEqual([100, 50, 25]);
    expect(reports.map((r) => r.context)).toEqual([
      { summarizer: 'scripted', attempt: 1, maxTokens: 100, retryMaxTokens: 50 },
      { summarizer: 'scripted', attempt: 2, maxTokens: 50, retryMaxTokens: 25 },
    ]);
  });

  it('rethrows other errors as they are and wraps non-CompactErrors', async () => {
    await expect(
      resilientSummarizer(scripted([fail('summarizer_failed')])).summarize(sampleRequest()),
    ).rejects.toMatchObject({
      code: 'summarizer_failed',
    });
    const plain = scripted([
      async () => {
        throw new TypeError('socket hang up');
      },
    ]);
    await expect(resilientSummarizer(plain).summarize(sampleRequest())).rejects.toMatchObject({
      code: 'summarizer_failed',
      message: 'scripted: socket hang up',
    });
  });

  it('treats an empty summary as a failure, never as text', async () => {
    await expect(
      resilientSummarizer(scripted([async () => '  '])).summarize(sampleRequest()),
    ).rejects.toMatchObject({
      code: 'summarizer_failed',
    });
  });

  it('times out an inner summarizer that ignores its signal, and aborts the signal it got', async () => {
    const inner = scripted([() => new Promise<string>(() => {})]);
    await expect(
      resilientSummarizer(inner, { timeoutMs: 50 }).summarize(sampleRequest()),
    ).rejects.toMatchObject({
      code: 'summarizer_timeout',
    });
    expect(inner.calls[0]!.signal!.aborted).toBe(true);
  });

  it("reports the caller's abort as aborted and does not count it against the circuit", async () => {
    const controller = new AbortController();
    const inner = scripted([() => new Promise<string>(() => {})]);
    const wrapped = resilientSummarizer(inner, { circuitBreaker: { failureThreshold: 1 } });
    const pending = wrapped.summarize(sampleRequest({ signal: controller.signal }));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ code: 'aborted' });
    expect(wrapped.circuit('session-1')).toEqual({ failures: 0, open: false });
    const aborted = AbortSignal.abort();
    await expect(wrapped.summarize(sampleRequest({ signal: aborted }))).rejects.toMatchObject({
      code: 'aborted',
    });
  });

  it('opens the circuit after 3 consecutive failures, fails fast while open, half-opens after the cool-down', async () => {
    let clock = 1_000;
    const inner = scripted([
      fail('summarizer_failed'),
      fail('summarizer_failed'),
      fail('summarizer_failed'),
      async () => 'ok',
    ]);
    const wrapped = resilientSummarizer(inner, { circuitBreaker: { cooldownMs: 10_000 }, now: () => clock });
    const reports: SummarizerErrorReport[] = [];
    const request = sampleRequest({ reportError: (r) => reports.push(r) });
    for (let i = 0; i < 3; i++)
      await expect(wrapped.summarize(request)).rejects.toMatchObject({ code: 'summarizer_failed' });
    expect(wrapped.circuit('session-1')).toEqual({ failures: 3, open: true, openUntil: 11_000 });
    await expect(wrapped.summarize(request)).rejects.toMatchObject({
      code: 'summarizer_failed',
      message: expect.stringContaining('circuit open'),
    });
    expect(inner.calls).toHaveLength(3);
    expect(reports).toEqual([
      expect.objectContaining({
        errorType: 'circuit_open',
        fallback: 'embedded',
        context: expect.objectContaining({ failures: 3, retryAt: 11_000 }),
      }),
    ]);
    // Other sessions are not affected.
    expect(wrapped.circuit('session-2').open).toBe(false);
    clock = 11_000;
    expect((await wrapped.summarize(request)).text).toBe('ok');
    expect(wrapped.circuit('session-1')).toEqual({ failures: 0, open: false });
  });

  it('reopens when the half-open call fails, and can be disabled', async () => {
    let clock = 0;
    const wrapped = resilientSummarizer(scripted([fail('summarizer_timeout')]), {
      circuitBreaker: { failureThreshold: 1, cooldownMs: 5 },
      now: () => clock,
    });
    await expect(wrapped.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_timeout' });
    clock = 5;
    await expect(wrapped.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_timeout' });
    expect(wrapped.circuit('session-1')).toMatchObject({ failures: 2, open: true });
    const never = resilientSummarizer(scripted([fail('summarizer_failed')]), { circuitBreaker: false });
    for (let i = 0; i < 5; i++)
      await expect(never.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_failed' });
  });

  it('validates its options', () => {
    const inner = scripted([async () => 'x']);
    expect(() => resilientSummarizer(inner, { timeoutMs: 0 })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
    expect(() => resilientSummarizer(inner, { circuitBreaker: { failureThreshold: 0 } })).toThrow(
      expect.objectContaining({ code: 'invalid_config' }),
    );
  });
});
