/**
 * What `CompactManager.ready()` loads ahead of a fresh process's first call on a known session:
 * the tokenizer's tables in slices (and its expressions compiled), the redaction rules in
 * slices, Node's crypto for span ids, the summary key when it is given or its file exists (no
 * file is created here), the summary markup's check of text that is not ASCII (a stored summary
 * is defused on the call), the built-in summarizer's segmenter and model, and, with a store
 * outside the process, the quick path's code compiled by a rehearsed first call on a made-up
 * session (rehearse-first-call.ts), each after a turn of the loop.
 */
import type { TokenCounter } from '../counting/token-counter.js';
import { primeSpanIds } from '../events/events.js';
import type { SessionStore } from '../session/session-store.js';
import { warmFirstSummary } from '../summary/embedded/warm-first-summary.js';
import { warmSummaryMarkup } from '../summary/summary-markup.js';
import { type RehearsalManager, rehearseFirstCall } from './rehearse-first-call.js';

export async function warmFirstCall(
  counter: TokenCounter,
  marks: { prepare(): void },
  store: SessionStore,
  rehearsal: (store: SessionStore) => RehearsalManager,
  redaction: { warm(): Promise<void> },
): Promise<void> {
  await counter.ready?.();
  await redaction.warm();
  primeSpanIds();
  marks.prepare();
  warmSummaryMarkup();
  await warmFirstSummary();
  await rehearseFirstCall(counter, store, rehearsal);
}
