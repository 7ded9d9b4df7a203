/**
 * Issue 47 point 2: a fresh process's first built-in summary built the sentence segmenter
 * (~14 ms of CPU in one piece) inside a call or a background preparation. `ready()` builds it
 * now, in a turn of the loop of its own. Isolated in vitest.config.ts: the segmenter is built
 * once per process.
 */
import { afterEach, describe, expect, it } from 'vitest';
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
});
