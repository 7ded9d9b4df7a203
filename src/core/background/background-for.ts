/** The background preparations a manager's options ask for. */

import { invalidConfig } from '../errors.js';
import type { CompactManagerOptions } from '../manager/manager-options.js';
import type { SessionStore } from '../session/session-store.js';
import { BackgroundPreparations } from './background-preparation.js';
import type { BackgroundOptions } from './background-status.js';
import type { PreparedSigning } from './shared-preparation.js';

/**
 * The manager's background preparations (`background: true`, or a `preparationQueue`), or
 * `undefined`. With a shared store (`lockTtlMs` set), one process prepares per session; its
 * lock outlasts the summarizer's time limit. With a queue, workers prepare and publish in `store`.
 */
export function backgroundFor(
  options: Pick<CompactManagerOptions, 'background' | 'preparationQueue' | 'preparationLead'>,
  store: SessionStore,
  lockTtlMs: number | undefined,
  timeoutMs: number,
  signing: PreparedSigning,
  onBacklog?: BackgroundOptions['onBacklog'],
): BackgroundPreparations | undefined {
  const queue = options.preparationQueue;
  if (options.background !== true && queue === undefined) return undefined;
  if (queue !== undefined && (queue === null || typeof queue.enqueue !== 'function'))
    throw invalidConfig('preparationQueue', 'must be a PreparationQueue (an object with enqueue)');
  const shared =
    lockTtlMs === undefined && queue === undefined
      ? undefined
      : { store, lockTtlMs: 2 * timeoutMs + 5_000, signing };
  const lead = options.preparationLead;
  if (lead !== undefined && lead !== 'learned' && lead !== 'fixed')
    throw invalidConfig('preparationLead', `must be 'learned' or 'fixed' (got ${String(lead)})`);
  return new BackgroundPreparations(1_000, shared, queue, {
    ...(lead ? { lead } : {}),
    ...(onBacklog ? { onBacklog } : {}),
  });
}
