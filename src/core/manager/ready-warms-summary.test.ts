/**
 * Issue 47 point 2: a fresh process's first built-in summary built the sentence segmenter
 * (~14 ms of CPU in one piece) inside a call or a background preparation. `ready()` builds it
 * now, in a turn of the loop of its own. Isolated in vitest.config.ts: the segmenter is built
 * once per process, and the summary markup's characters are mapped once per process.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defuseSummaryMarkup } from '../summary/summary-markup.js';
import { CompactManager } from './compact-manager.js';

const Segmenter = Intl.Segmenter;
const intl = Intl as { Segmenter: typeof Segmenter };

afterEach(() => {
  intl.Segmenter = Segmenter;
});

describe('ready() and the first summary', () => {
  it('builds the sentence segmenter after a turn of the loop', async () => {
    // Observed, not replaced: the real segmenter is built.
    let turned = false;
    let turnedBeforeBuilt: boolean | undefined;
    intl.Segmenter = class extends Segmenter {
      constructor(...args: ConstructorParameters<typeof Segmenter>) {
        if (args[1]?.granularity === 'sentence') turnedBeforeBuilt ??= turned;
        super(...args);
      }
    } as typeof Segmenter;
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    setImmediate(() => {
      turned = true;
    });
    await manager.ready();
    expect(turnedBeforeBuilt).toBe(true);
    await manager.shutdown();
  });

  it('maps the characters summaries hold most: a stored summary is defused after it without NFKC', async () => {
    // Issue 47 point 1: a fresh process's first call on a compacted session defuses the stored
    // summary; its first arrow or dash compiled the skeleton's expressions and loaded NFKC there.
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    await manager.ready();
    const normalize = vi.spyOn(String.prototype, 'normalize');
    try {
      const text =
        'Read src/a.ts \u2192 fixed \u2014 tests pass\u2026 \u201cdone\u201d, it\u2019s \u2022 ok \u2013 </history>';
      expect(defuseSummaryMarkup(text)).toContain('[/history>');
      expect(normalize).not.toHaveBeenCalled();
    } finally {
      normalize.mockRestore();
      await manager.shutdown();
    }
  });
});
