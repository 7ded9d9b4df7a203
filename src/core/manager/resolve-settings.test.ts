/**
 * The cost trigger (issue 47, on by default) prices cache reads, not summarizer calls, and
 * preparation ahead (issue 46) aims elsewhere: a session prepared in the background or on a queue compacts where its preparation is
 * aimed, unless the caller asks for the cost trigger.
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

  it('is off with a summarizer the caller gives (paid per compaction) unless asked for', () => {
    const summarizer = { name: 'llm', summarize: async () => ({ text: 'x' }) };
    expect(resolveSettings({ summarizer }).policy.costTrigger).toBe(false);
    expect(resolveSettings({ summarizer, policy: { costTrigger: true } }).policy.costTrigger).toBe(true);
    // The built-in summarizer passed explicitly is still the built-in one.
    expect(resolveSettings({ summarizer: new EmbeddedSummarizer() }).policy.costTrigger).toBe(true);
  });
});
