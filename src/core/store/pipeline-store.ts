/**
 * The store the pipeline uses. The in-process store cannot fail: it is used as it is, with the
 * archive's version floor when the archive lists its summaries (a restarted process resumes
 * above them). Any other store goes behind the fail-open store (which reads the same floor)
 * unless told to fail closed.
 */

import type { StorageAdapter } from '../archive/storage-adapter.js';
import { MemorySessionStore, type SessionStore } from '../session/session-store.js';
import { ArchiveFloorStore } from './archive-floor-store.js';
import { FailOpenStore, type FailOpenStoreOptions } from './fail-open-store.js';

/** The fail-open store's event handlers (store-fault-events.ts). */
type FaultHandlers = Pick<FailOpenStoreOptions, 'onOutage' | 'onCorrupt' | 'onRecovery' | 'onLost'> & {
  onFloor: (key: string, version: number) => void;
};

export function pipelineStore(
  store: SessionStore,
  archive: StorageAdapter | undefined,
  settings: { storeTimeoutMs: number; failOnStorageError: boolean },
  handlers: FaultHandlers,
): { store: SessionStore; failOpen: FailOpenStore | undefined } {
  const floor = archive?.latestSummaryStep ? (key: string) => archive.latestSummaryStep!(key) : undefined;
  const failOpen = failOpenFor(store, settings, { ...handlers, ...(floor ? { floor } : {}) });
  if (failOpen) return { store: failOpen, failOpen };
  return {
    store: floor ? new ArchiveFloorStore(store, floor, settings.storeTimeoutMs, handlers.onFloor) : store,
    failOpen: undefined,
  };
}

/**
 * The store a manager's pipeline uses: the in-process store as it is (it cannot fail), any
 * other behind a {@link FailOpenStore} (or fail-closed with `failOnStorageError`).
 */
export function failOpenFor(
  store: SessionStore,
  settings: { storeTimeoutMs: number; failOnStorageError: boolean },
  handlers: Pick<
    FailOpenStoreOptions,
    'onOutage' | 'onCorrupt' | 'onRecovery' | 'onLost' | 'floor' | 'onFloor'
  >,
): FailOpenStore | undefined {
  if (Object.getPrototypeOf(store) === MemorySessionStore.prototype) return undefined;
  return new FailOpenStore(store, {
    timeoutMs: settings.storeTimeoutMs,
    failClosed: settings.failOnStorageError,
    ...handlers,
  });
}
