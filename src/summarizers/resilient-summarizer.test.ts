import { beforeEach, describe, expect, it } from 'vitest';
import { sampleRequest } from '../../test/fixtures/summarizers/sample-session.js';
import { CompactError } from '../core/errors.js';
import type {
  SummarizeRequest,
  Summarizer,
  SummarizerCircuitReport,
  SummarizerErrorReport,
} from '../core/summary/summarizer.js';
import { resetCircuitBreakers } from './circuit-breaker.js';
import { resilientSummarizer } from './resilient-summarizer.js';

beforeEach(() => resetCircuitBreakers());

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
    const inner = scripted([async () => '## Goals\n- fine']);
    const result = await resilientSummarizer(inner).summarize(sampleRequest());
    expect(result).toEqual({ summarizer: 'scripted', text: '## Goals\n- fine', model: 'm' });
    expect(inner.calls[0]!.signal).toBeInstanceOf(AbortSignal);
  });

  it('checks length with the request counter and halves maxTokens, recovering on the second retry', async () => {
    const inner = scripted([
      async () => 'x'.repeat(2000),
      async () => 'x'.repeat(2000),
      async () => '- short',
    ]);
    const reports: SummarizerErrorReport[] = [];
    const result = await resilientSummarizer(inner).summarize(
      sampleRequest({ maxTokens: 100, reportError: (r) => reports.push(r) }),
    );
    expect(result.text).toBe('- short');
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
      async () => '- ok',
    ]);
    const wrapped = resilientSummarizer(inner, { circuitBreaker: { cooldownMs: 10_000 }, now: () => clock });
    const reports: SummarizerErrorReport[] = [];
    const request = sampleRequest({ reportError: (r) => reports.push(r) });
    for (let i = 0; i < 3; i++)
      await expect(wrapped.summarize(request)).rejects.toMatchObject({ code: 'summarizer_failed' });
    expect(wrapped.circuit('session-1')).toEqual({ failures: 3, open: true, openUntil: 11_000 });
    await expect(wrapped.summarize(request)).rejects.toMatchObject({
      code: 'summarizer_failed',
      message: expect.stringContaining('circuit scripted open'),
    });
    expect(inner.calls).toHaveLength(3);
    expect(reports.slice(0, 1)).toEqual([
      expect.objectContaining({
        errorType: 'circuit_open',
        fallback: 'embedded',
        context: expect.objectContaining({ failures: 3, retryAt: 11_000 }),
      }),
    ]);
    // The breaker is per provider and model: other sessions fail fast too.
    await expect(wrapped.summarize(sampleRequest({ sessionId: 'session-2' }))).rejects.toMatchObject({
      message: expect.stringContaining('circuit scripted open'),
    });
    expect(inner.calls).toHaveLength(3);
    clock = 11_000;
    expect((await wrapped.summarize(request)).text).toBe('- ok');
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

  it('retries a plain-text refusal once with the brief strategy, and never returns one', async () => {
    const refusal = async () => "I'm sorry, but I can't help with that.";
    const inner = scripted([refusal, async () => '- Migrating billing to Postgres 15 [#1]']);
    const reports: SummarizerErrorReport[] = [];
    const result = await resilientSummarizer(inner).summarize(
      sampleRequest({ reportError: (r) => reports.push(r) }),
    );
    expect(result.text).toBe('- Migrating billing to Postgres 15 [#1]');
    expect(inner.calls.map((c) => c.strategy)).toEqual(['task_state', 'brief']);
    expect(reports).toEqual([
      expect.objectContaining({ errorType: 'summarizer_refused', fallback: 'retry_brief' }),
    ]);
    await expect(
      resilientSummarizer(scripted([refusal]), { circuitBreaker: false }).summarize(sampleRequest()),
    ).rejects.toMatchObject({
      code: 'summarizer_refused',
      reason: 'refusal',
    });
  });

  it('rejects output with no structure or that echoes the transcript (reason on the error)', async () => {
    const chat = scripted([async () => 'Sure, happy to help with your migration!']);
    await expect(resilientSummarizer(chat).summarize(sampleRequest())).rejects.toMatchObject({
      code: 'summarizer_failed',
      reason: 'no_structure',
    });
  });

  it("counts a time limit of an outer layer (the manager's, AbortSignal.timeout) as a failure, not the caller's abort", async () => {
    const hang = () => new Promise<string>(() => {});
    const wrapped = resilientSummarizer(scripted([hang]), {
      timeoutMs: 60_000,
      circuitBreaker: { key: 'outer-limit' },
    });
    const circuit: SummarizerCircuitReport[] = [];
    for (let i = 0; i < 2; i++) {
      // What the manager does when its own limit expires.
      const manager = new AbortController();
      const pending = wrapped.summarize(
        sampleRequest({ signal: manager.signal, reportCircuit: (e) => circuit.push(e) }),
      );
      manager.abort(new CompactError('summarizer_timeout', 'the summarizer did not answer within 50 ms'));
      await expect(pending).rejects.toMatchObject({ code: 'summarizer_timeout' });
    }
    await expect(
      wrapped.summarize(
        sampleRequest({ signal: AbortSignal.timeout(20), reportCircuit: (e) => circuit.push(e) }),
      ),
    ).rejects.toMatchObject({ code: 'summarizer_timeout' });
    expect(wrapped.circuit()).toMatchObject({ failures: 3, open: true });
    expect(circuit).toEqual([
      expect.objectContaining({ key: 'outer-limit', transition: 'open', failures: 3 }),
    ]);
  });

  it('shares one total budget between attempts and retries', async () => {
    let calls = 0;
    const slowTooLong: Summarizer = {
      name: 'slow',
      async summarize() {
        calls++;
        await new Promise((resolve) => setTimeout(resolve, 40));
        return { text: `- ${'word '.repeat(2000)}` };
      },
    };
    const wrapped = resilientSummarizer(slowTooLong, {
      timeoutMs: 1_000,
      totalTimeoutMs: 60,
      maxLengthRetries: 5,
    });
    expect(wrapped.maxDurationMs).toBe(60);
    await expect(wrapped.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_timeout' });
    // 40 ms attempts in a 60 ms budget: the second attempt is cut (a loaded machine may cut
    // the first); never the 6 attempts the length retries alone would allow.
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(2);
  });

  it('lets a single probe through while half-open; concurrent sessions fall back', async () => {
    let clock = 0;
    let release: (text: string) => void = () => {};
    const inner = scripted([
      fail('summarizer_failed'),
      () =>
        new Promise<string>((resolve) => {
          release = resolve;
        }),
    ]);
    const wrapped = resilientSummarizer(inner, {
      circuitBreaker: { failureThreshold: 1, cooldownMs: 10, key: 'probe-test' },
      now: () => clock,
    });
    const circuit: SummarizerCircuitReport[] = [];
    const request = (sessionId: string) =>
      sampleRequest({ sessionId, reportCircuit: (e) => circuit.push(e) });
    await expect(wrapped.summarize(request('a'))).rejects.toMatchObject({ code: 'summarizer_failed' });
    clock = 10;
    const probe = wrapped.summarize(request('b'));
    const others = await Promise.allSettled([
      wrapped.summarize(request('c')),
      wrapped.summarize(request('d')),
    ]);
    expect(others.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    release('- back [#1]');
    expect((await probe).text).toBe('- back [#1]');
    expect(inner.calls).toHaveLength(2);
    expect(circuit.map((e) => e.transition)).toEqual(['open', 'probe', 'close']);
  });

  it("does not let one session's refusals or rejected outputs switch the LLM off for everyone", async () => {
    const refusing = scripted([async () => "I'm sorry, but I can't help with that."]);
    const wrapped = resilientSummarizer(refusing, {
      circuitBreaker: { failureThreshold: 1, key: 'content' },
    });
    for (let i = 0; i < 3; i++) {
      await expect(wrapped.summarize(sampleRequest())).rejects.toMatchObject({ code: 'summarizer_refused' });
    }
    expect(wrapped.circuit()).toEqual({ failures: 0, open: false });
    expect(refusing.calls).toHaveLength(6);
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
