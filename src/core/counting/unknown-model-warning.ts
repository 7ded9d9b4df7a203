/**
 * The warning for a model name the table does not know: its window is a guess, so an agent
 * on an 8k local model would overflow silently. One console warning and one
 * `compact.unknown_model` event per manager; giving `maxContextTokens` silences both.
 */
import type { EventBus } from '../events/event-bus.js';
import { newSpanId } from '../events/events.js';
import { boundedLevenshtein, modelInfo, normalizeModelName } from './model-table.js';

/**
 * The known name to suggest for an unknown `model`: the closest one, when it is close enough
 * to be a typo (`gtp-4o` -> `gpt-4o`); `my-llm` is not a misspelt `o1-pro`.
 */
export function suggestedModelName(model: string): string | undefined {
  const closest = modelInfo(model).closest;
  if (closest === undefined) return undefined;
  const probe = normalizeModelName(model).slice(0, 64);
  const bound = Math.max(2, Math.floor(probe.length / 4));
  return boundedLevenshtein(probe, closest, bound) <= bound ? closest : undefined;
}

/** The warning text for `model`, or `undefined` when the model is known. */
export function unknownModelMessage(model: string): string | undefined {
  const info = modelInfo(model);
  if (info.known) return undefined;
  const suggestion = suggestedModelName(model);
  const closest = suggestion === undefined ? '' : ` (closest known model: "${suggestion}")`;
  return `agent-compaction: unknown model "${model}": assuming a ${info.contextWindow.toLocaleString('en-US')}-token context window${closest}. Pass maxContextTokens to set the window and silence this warning.`;
}

/**
 * Warns once about an unknown model: `console.warn` now, and a `compact.unknown_model`
 * event on the next microtask, so listeners subscribed right after the constructor receive
 * it too (exporters always do). Does nothing when the window was given or the model is known.
 */
export function warnUnknownModel(bus: EventBus, model: string, windowGiven: boolean): void {
  if (windowGiven) return;
  const message = unknownModelMessage(model);
  if (message === undefined) return;
  const info = modelInfo(model);
  console.warn(message);
  const start = Date.now();
  queueMicrotask(() => {
    const id = newSpanId();
    bus.emit(
      { sessionId: '', operationId: id, traceId: id, parentId: undefined, archived: undefined },
      'compact.unknown_model',
      { model, assumedContextWindow: info.contextWindow, closest: suggestedModelName(model) ?? '', message },
      { start },
    );
  });
}
