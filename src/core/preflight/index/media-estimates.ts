/**
 * Parts counted by a stated estimate rather than their content: a file sent by id (its size
 * is the provider's to know). Each new one is reported once, as a `compact.warning` with code
 * `media_estimate`, so a trace says where a figure is a guess.
 */
import { FILE_REFERENCE_TOKENS } from '../../counting/count-media.js';
import type { EventBus, OperationContext } from '../../events/event-bus.js';
import { mediaParts } from '../../messages/formats/media-parts.js';
import type { TimeSlice } from '../../time-slice.js';

/** One `compact.warning` per file reference in `messages[from..]`. */
export function emitMediaEstimates(
  bus: EventBus,
  context: OperationContext,
  messages: readonly unknown[],
  from: number,
  start: number,
): void {
  for (let index = Math.max(0, from); index < messages.length; index++)
    emitEstimates(bus, context, messages, index, start);
}

/** {@link emitMediaEstimates}, giving the event loop a turn whenever `slice` has run its time. */
export async function emitMediaEstimatesInSlices(
  bus: EventBus,
  context: OperationContext,
  messages: readonly unknown[],
  from: number,
  start: number,
  slice: TimeSlice,
): Promise<void> {
  for (let index = Math.max(0, from); index < messages.length; index++) {
    emitEstimates(bus, context, messages, index, start);
    if (slice.due()) await slice.pause();
  }
}

function emitEstimates(
  bus: EventBus,
  context: OperationContext,
  messages: readonly unknown[],
  index: number,
  start: number,
): void {
  for (const part of mediaParts(messages[index])) {
    if (part.kind !== 'document' || part.fileId === undefined) continue;
    bus.emit(
      context,
      'compact.warning',
      {
        code: 'media_estimate',
        message: `messages[${index}]: file ${part.fileId.slice(0, 80)} is sent by id, its size unknown here: counted as ${FILE_REFERENCE_TOKENS} tokens (one PDF page) until reported usage corrects it`,
        context: { index, fileId: part.fileId, tokens: FILE_REFERENCE_TOKENS },
      },
      { start },
    );
  }
}
