/**
 * The cost trigger (issue 47, on by default) and preparation ahead (issue 46) aim at different
 * points: a session prepared in the background or on a queue compacts where its preparation is
 * aimed, unless the caller asks for the cost trigger. A summarizer of the caller's keeps it on:
 * its early compactions only clear (test/cost/paid-summarizer-early.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { EmbeddedSummarizer } from '../summary/embedded-summarizer.js';
import { resolveSettings } from './resolve-settings.js';

describe('the cost trigger beside preparation ahead', () => {
  it('is on by default, off with background preparation unless asked for', () => {
    expect(resolveSettings({}).policy.costTrigger).toBe(true);
    expect(resolveSettings({ background: true }).policy.costTrigger).toBe(false);
    expect(resolveSettings({ background: true, policy: { costTrigger: true } }).policy.costTrigger).toBe(
      true,
    );
    expect(resolveSettings({ background: true, policy: { preset: 'cost' } }).policy.costTrigger).toBe(true);
  });

  it('stays on with a summarizer the caller gives (its early compactions only clear)', () => {
    const summarizer = { name: 'llm', summarize: async () => ({ text: 'x' }) };
    expect(resolveSettings({ summarizer }).policy.costTrigger).toBe(true);
    expect(resolveSettings({ summarizer, policy: { costTrigger: false } }).policy.costTrigger).toBe(false);
    expect(resolveSettings({ summarizer: new EmbeddedSummarizer() }).policy.costTrigger).toBe(true);
  });
});
