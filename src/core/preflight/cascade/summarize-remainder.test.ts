import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { tokenCounterFor } from '../../counting/token-counter.js';
import type { Summarizer } from '../../summary/summarizer.js';
import { summarizeWithFallback } from './summarize-remainder.js';

describe('summarizeWithFallback and the caller signal', () => {
  it('adds no listener to a signal shared by many pending summarizations (no MaxListeners warning)', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let started = 0;
    let allStarted!: () => void;
    const everyoneIn = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    const summarizer: Summarizer = {
      name: 'gated',
      async summarize() {
        if (++started === 12) allStarted();
        await gate;
        return { text: '## Task\nfix the bug' };
      },
    };
    const shared = new AbortController();
    const context = {
      chain: [summarizer],
      timeoutMs: 600_000,
      counter: tokenCounterFor('gpt-4o'),
      redact: undefined,
      emit: (() => {}) as never,
    };
    const runs = Array.from({ length: 12 }, (_, i) =>
      summarizeWithFallback(
        context,
        {
          sessionId: `s${i}`,
          strategy: 'task_state',
          messages: [],
          maxTokens: 200,
          signal: shared.signal,
        },
        1,
        () => undefined,
      ),
    );
    await everyoneIn;
    // Before: one listener per pending call on the caller's signal (12: Node warns past 10).
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    open();
    const outcomes = await Promise.all(runs);
    expect(outcomes.every((outcome) => outcome?.text.includes('fix the bug'))).toBe(true);
  });

  it('still rejects a pending summarization when the caller aborts', async () => {
    const summarizer: Summarizer = { name: 'hangs', summarize: () => new Promise(() => {}) };
    const controller = new AbortController();
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const run = summarizeWithFallback(
      {
        chain: [
          {
            ...summarizer,
            summarize: (request) => {
              entered();
              return summarizer.summarize(request);
            },
          },
        ],
        timeoutMs: 600_000,
        counter: tokenCounterFor('gpt-4o'),
        redact: undefined,
        emit: (() => {}) as never,
      },
      { sessionId: 's', strategy: 'task_state', messages: [], maxTokens: 200, signal: controller.signal },
      1,
      () => undefined,
    ).catch((error: unknown) => error);
    await inside;
    controller.abort(new Error('caller gone'));
    expect(String(await run)).toMatch(/caller gone|abort/i);
  });
});
