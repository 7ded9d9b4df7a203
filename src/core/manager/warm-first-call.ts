/**
 * What `CompactManager.ready()` loads ahead of a fresh process's first call on a known session:
 * the tokenizer's tables in slices (and its expressions compiled), Node's crypto for span ids,
 * the summary key when it is given or its file exists (no file is created here), the
 * built-in summarizer's segmenter and model, each after a turn of the loop. The rehearsal of a
 * first call (rehearse-first-call.ts) is not run: the code it compiles stays after `shutdown()`
 * and takes the heap over 2 MB above a fresh process's (test/core/heap-after-shutdown.test.ts).
 */
import type { TokenCounter } from '../counting/token-counter.js';
import { primeSpanIds } from '../events/events.js';
import { warmFirstSummary } from '../summary/embedded/warm-first-summary.js';

export async function warmFirstCall(counter: TokenCounter, marks: { prepare(): void }): Promise<void> {
  await counter.ready?.();
  primeSpanIds();
  marks.prepare();
  await warmFirstSummary();
}
