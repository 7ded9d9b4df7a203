/**
 * The reply a request asks for (`max_tokens`, `max_completion_tokens`, `max_output_tokens`; the
 * AI SDK's `maxOutputTokens`, an agent's `modelSettings.maxTokens`, a LangChain model's
 * `maxTokens`) is kept free below the window through every SDK integration: providers refuse a
 * prompt that passes the window with it. Each path runs a 40-step tool loop whose requests ask
 * for a quarter of the window, and every request is checked by `checkSoundRequest`, which counts
 * the reply the body asks for. Before the integrations passed it to the manager, only the
 * policy's buffer (a tenth of the window) was kept: requests of 6,000 to 6,800 tokens asking
 * for 2,000 more went out on every path but the CLI's (which asks for no reply).
 */
import { describe, expect, it } from 'vitest';
import { LOOP_PATHS } from '../support/sound-loop-drivers.js';
import { Ledger, WINDOW } from '../support/sound-paths.js';

const REPLY = Math.floor(WINDOW / 4);
const STEPS = 40;

/** Outputs of 1% to 6% of the window, with a 20% one every ninth step: the trigger is reached often. */
const sizes = {
  outputTokens: Array.from({ length: STEPS }, (_, k) =>
    Math.round(((k % 9 === 8 ? 20 : 1 + (k % 6)) * WINDOW) / 100),
  ),
  noteTokens: Array.from({ length: STEPS }, () => 0),
};

const paths = Object.keys(LOOP_PATHS).filter((path) => !path.startsWith('cli'));

describe('the reply each request asks for fits beside its prompt', () => {
  it.each(paths)('%s', async (path) => {
    const ledger = new Ledger();
    await LOOP_PATHS[path]!(ledger, {
      steps: STEPS,
      sizes,
      api: 'chat',
      promptTokens: 40,
      replyTokens: REPLY,
    });
    const run = ledger.of(path);
    expect(run.violations).toEqual([]);
    // The loop compacted: the reply's room was needed, not left unused below the trigger.
    expect(run.requests).toBeGreaterThan(STEPS);
    expect(run.levels.clear + run.levels.summarize).toBeGreaterThan(0);
  });
});
