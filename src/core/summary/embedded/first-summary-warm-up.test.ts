/**
 * Issue 47 point 2: a fresh process's first summary built the sentence segmenter (ICU's break
 * rules, ~13 ms of CPU) and decoded the instruction model in the same step as the first user
 * message: a background preparation held the loop 24-30 ms. Each now has a step of its own,
 * and ICU's one-time load before the segmenter is asked for in three pieces, a turn after each.
 * Isolated in vitest.config.ts: both are process-wide, built once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { messageList } from '../../../../test/support/compact-messages.js';
import { tokenCounterFor } from '../../counting/token-counter.js';
import { INSTRUCTION_WEIGHTS } from '../../language/instruction-weights.js';
import { EmbeddedSummarizer } from './index.js';

const Segmenter = Intl.Segmenter;
const atob = globalThis.atob;
const intl = Intl as { Segmenter: typeof Segmenter };
const maximize = Intl.Locale.prototype.maximize;
const collatorLocales = Intl.Collator.supportedLocalesOf;
const segmenterLocales = Intl.Segmenter.supportedLocalesOf;

afterEach(() => {
  intl.Segmenter = Segmenter;
  globalThis.atob = atob;
  Intl.Locale.prototype.maximize = maximize;
  Intl.Collator.supportedLocalesOf = collatorLocales;
  Segmenter.supportedLocalesOf = segmenterLocales;
});

/** Records `name` in `log` on its first call, then a turn of the loop when one has passed. */
function logged<F extends (...args: never[]) => unknown>(log: string[], name: string, f: F): F {
  return function (this: unknown, ...args: Parameters<F>) {
    if (!log.includes(name)) {
      log.push(name);
      setImmediate(() => log.push('turn'));
    }
    return f.apply(this, args);
  } as F;
}

describe("the embedded summarizer's first summary in a process", () => {
  it('gives the loop a turn between building the sentence segmenter and decoding the model', async () => {
    // Observed, not replaced: the real segmenter and decoder run.
    let turned: boolean | undefined;
    let turnedBeforeDecode: boolean | undefined;
    const pieces: string[] = [];
    Intl.Locale.prototype.maximize = logged(pieces, 'likely subtags', maximize);
    Intl.Collator.supportedLocalesOf = logged(pieces, 'collator locales', collatorLocales);
    Segmenter.supportedLocalesOf = logged(pieces, 'segmenter locales', segmenterLocales);
    intl.Segmenter = class extends Segmenter {
      constructor(...args: ConstructorParameters<typeof Segmenter>) {
        super(...args);
        if (args[1]?.granularity === 'sentence') logged(pieces, 'segmenter', () => undefined)();
        if (turned === undefined && args[1]?.granularity === 'sentence') {
          turned = false;
          setImmediate(() => {
            turned = true;
          });
        }
      }
    } as typeof Segmenter;
    globalThis.atob = (data: string) => {
      if (data === INSTRUCTION_WEIGHTS && turnedBeforeDecode === undefined) turnedBeforeDecode = turned;
      return atob(data);
    };
    const list = messageList();
    list.user('Please fix the failing build. Always run the tests before you push, and never touch main.');
    list.assistant('On it.');
    const counter = tokenCounterFor('gpt-4o');
    const summary = await new EmbeddedSummarizer({ sliceMs: 0 }).summarize({
      strategy: 'task_state',
      sessionId: 's',
      messages: list.messages,
      maxTokens: 400,
      countTokens: (text) => counter.countText(text),
    });
    expect(summary.text).toContain('never touch main');
    expect(turned).toBeDefined();
    expect(turnedBeforeDecode).toBe(true);
    // Each piece of ICU's load, then a turn of the loop, then the next.
    expect(pieces.slice(0, 8)).toEqual(
      ['likely subtags', 'collator locales', 'segmenter locales', 'segmenter'].flatMap((p) => [p, 'turn']),
    );
  });
});
