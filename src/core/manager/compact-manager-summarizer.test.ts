import { describe, expect, it } from 'vitest';
import { charCounter, chatTurns, collect } from '../../../test/support/manager-fixtures.js';
import { isCompactError } from '../errors.js';
import type { CompactEvent } from '../events/events.js';
import { EmbeddedSummarizer } from '../summary/embedded-summarizer.js';
import type { Summarizer } from '../summary/summarizer.js';
import { CompactManager } from './compact-manager.js';

describe('summarizer failures', () => {
  const failing = (error: unknown): Summarizer => ({
    name: 'llm',
    async summarize() {
      throw error;
    },
  });

  it('falls back to the embedded summarizer and reports the error', async () => {
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      policy: { userTextShare: 0 },
      summarizer: failing(new Error('HTTP 500')),
    });
    const events = collect(manager);
    const result = await manager.manualCompact('s', [
      { role: 'user', content: 'Goal: fix ticket OPS-42.' },
      ...chatTurns(8, 30),
    ]);
    expect(result.summary).toMatchObject({ summarizer: 'embedded', fallback: 'embedded' });
    expect(result.summary!.text).toContain('OPS-42');
    const error = events.find((e) => e.name === 'compact.error') as CompactEvent<'compact.error'>;
    expect(error.properties).toMatchObject({ message: 'HTTP 500', fallback: 'embedded' });
  });

  it('never stores a failure as summary text: over-long or empty summaries fall back', async () => {
    const tooLong: Summarizer = { name: 'verbose', summarize: async () => ({ text: 'word '.repeat(5000) }) };
    const empty: Summarizer = { name: 'empty', summarize: async () => ({ text: '   ' }) };
    for (const summarizer of [tooLong, empty]) {
      const manager = new CompactManager({
        maxContextTokens: 100_000,
        tokenCounter: charCounter,
        summarizer,
        policy: { maxSummaryTokens: 500 },
      });
      const events = collect(manager);
      const result = await manager.manualCompact('s', chatTurns(8, 30));
      expect(result.summary!.summarizer).toBe('embedded');
      expect(events.some((e) => e.name === 'compact.error')).toBe(true);
    }
  });

  /** A manager whose summarizer never answers, with a 50 ms summarization budget. */
  const hangingSummarizerManager = () =>
    new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      summarizer: { name: 'hang', summarize: () => new Promise(() => {}) },
      summarizerTimeoutMs: 50,
    });

  it('times out a hanging summarizer', async () => {
    const manager = hangingSummarizerManager();
    const events = collect(manager);
    const result = await manager.manualCompact('s', chatTurns(8, 30));
    expect(result.summary!.summarizer).toBe('embedded');
    expect(
      (events.find((e) => e.name === 'compact.error') as CompactEvent<'compact.error'>).properties.errorType,
    ).toBe('summarizer_timeout');
  });

  it('gives the embedded fallback at least a second, however small the budget', async () => {
    const manager = hangingSummarizerManager();
    // A fallback slower than the budget's tenth (5 ms), as on a loaded machine.
    const embedded = EmbeddedSummarizer.prototype.summarize;
    EmbeddedSummarizer.prototype.summarize = async function (this: EmbeddedSummarizer, request) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return embedded.call(this, request);
    };
    try {
      const result = await manager.manualCompact('s', chatTurns(8, 30));
      expect(result.summary).toMatchObject({ summarizer: 'embedded', fallback: 'embedded' });
    } finally {
      EmbeddedSummarizer.prototype.summarize = embedded;
    }
  });

  it('prunes only when every summarizer fails, keeping the previous summary', async () => {
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      summarizer: failing(new Error('down')),
    });
    // Make the embedded fallback fail too.
    const embedded = EmbeddedSummarizer.prototype.summarize;
    EmbeddedSummarizer.prototype.summarize = async () => {
      throw new Error('embedded broken');
    };
    try {
      const events = collect(manager);
      const result = await manager.manualCompact('s', chatTurns(8, 30));
      expect(result.applied).toBe(true);
      // No summary text survives a double failure: only a note saying what was removed.
      expect(result.summary).toMatchObject({ summarizer: 'none', fallback: 'pruning-only' });
      expect(result.summary!.text).toMatch(/earlier messages were removed without a summary/);
      expect(result.prunedCount).toBeGreaterThan(0);
      const fallbacks = events
        .filter((e) => e.name === 'compact.error')
        .map((e) => (e as CompactEvent<'compact.error'>).properties.fallback);
      expect(fallbacks).toEqual(['embedded', 'pruning-only']);
    } finally {
      EmbeddedSummarizer.prototype.summarize = embedded;
    }
  });

  it('aborts when the caller aborts', async () => {
    const hanging: Summarizer = { name: 'hang', summarize: () => new Promise(() => {}) };
    const manager = new CompactManager({
      maxContextTokens: 100_000,
      tokenCounter: charCounter,
      summarizer: hanging,
    });
    const controller = new AbortController();
    const pending = manager.manualCompact('s', chatTurns(8, 30), { signal: controller.signal });
    controller.abort(new Error('user left'));
    await expect(pending).rejects.toSatisfy((e: unknown) => isCompactError(e, 'aborted'));
  });
});
