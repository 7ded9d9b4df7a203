/**
 * Outage detection and call budgets of the manager's fail-open store (fail-open-store.ts):
 * every store operation runs here, under the time left in its manager call's budget. A fault
 * (an operation that throws or exceeds the time left) marks the store down for a cool-down,
 * is reported once per outage, and throws {@link StoreFault} for the caller to go on without
 * the store; the first answer after an outage ends it, reporting the calls it affected.
 */

import { describeCause } from '../describe-cause.js';
import { CompactError, isCompactError } from '../errors.js';
import type { FailOpenStoreOptions } from './fail-open-options.js';
import { type CallBudget, idleTimeLimit } from './idle-time-limit.js';

/** After a fault, the store is left alone this long before the next try (calls go local). */
const RETRY_AFTER_MS = 1_000;

/**
 * The cool-down's clock: monotonic, so a wall clock stepped back (NTP, a VM resumed) does not
 * keep the store left alone for as long as the step.
 */
const monotonicMs = () => performance.now();

/** A store operation that did not answer in time or threw: the caller goes on without the store. */
export class StoreFault extends Error {}

/** Runs store operations under call budgets, and tracks outages (see the file comment). */
export class StoreCalls {
  readonly #name: string;
  readonly #options: FailOpenStoreOptions;
  /** Called when the store answers again after an outage, with the calls it affected. */
  readonly #recovered: (key: string, affected: number) => void;
  #down: { retryAt: number } | undefined;
  /** Budgets of the manager calls in progress, per session key. */
  readonly #budgets = new Map<string, CallBudget>();
  /** Calls the current outage affected. */
  #affected = 0;

  constructor(
    name: string,
    options: FailOpenStoreOptions,
    recovered: (key: string, affected: number) => void,
  ) {
    this.#name = name;
    this.#options = options;
    this.#recovered = recovered;
  }

  /** True while the store is considered down. */
  get down(): boolean {
    return this.#down !== undefined;
  }

  /** True while the store is down and its cool-down has not passed. */
  get coolingDown(): boolean {
    return this.#down !== undefined && monotonicMs() < this.#down.retryAt;
  }

  /** Lets the next operation try the store at once, even within the cool-down after a fault. */
  retryNow(): void {
    if (this.#down) this.#down.retryAt = 0;
  }

  /** The budget of session `key`'s manager call in progress, if any. */
  budget(key: string): CallBudget | undefined {
    return this.#budgets.get(key);
  }

  /**
   * Runs one manager call of session `key`: its store operations share one budget of `timeoutMs`
   * (failing closed, they have no time limit; the budget only says a call of `key` runs).
   */
  async within<T>(key: string, run: () => Promise<T>): Promise<T> {
    if (this.#budgets.has(key)) return run();
    const budget: CallBudget = { leftMs: this.#options.timeoutMs, affected: false };
    this.#budgets.set(key, budget);
    try {
      return await run();
    } finally {
      this.#budgets.delete(key);
      if (budget.affected) this.#affected++;
    }
  }

  /** A fault met by a call (counted once per call) or by an operation outside one. */
  #affect(budget: CallBudget | undefined): void {
    if (budget) budget.affected = true;
    else this.#affected++;
  }

  /** Runs one store operation under the call's budget; a fault marks an outage and throws StoreFault. */
  async call<T>(
    key: string,
    operation: () => Promise<T>,
    budget: CallBudget | undefined = this.#budgets.get(key),
    /** An answer that costs the call nothing (a lock held elsewhere: the wait for it has its own bound). */
    free?: (value: T) => boolean,
  ): Promise<T> {
    if (this.#options.failClosed) return this.#closed(operation);
    if (this.coolingDown) {
      this.#affect(budget);
      throw new StoreFault();
    }
    // The call has waited its whole budget already: it goes on without the store (no outage:
    // the store answered, slowly).
    if (budget && budget.leftMs < 1) {
      this.#affect(budget);
      throw new StoreFault();
    }
    const limit = idleTimeLimit(Math.ceil(budget ? budget.leftMs : this.#options.timeoutMs));
    const started = operation();
    started.catch(() => {});
    let spent = true;
    try {
      const value = await Promise.race([started, limit.promise]);
      spent = !free?.(value);
      if (this.#down) this.#back(key);
      return value;
    } catch (error) {
      // A bad argument is the caller's bug, and a corrupt value is no outage.
      if (
        isCompactError(error, 'invalid_config') ||
        isCompactError(error, 'invalid_argument') ||
        isCompactError(error, 'corrupt_state')
      )
        throw error;
      const first = this.#down === undefined;
      this.#down = { retryAt: monotonicMs() + RETRY_AFTER_MS };
      this.#affect(budget);
      if (first) this.#options.onOutage(key, describeCause(error));
      throw new StoreFault();
    } finally {
      limit.cancel();
      if (budget && spent) budget.leftMs -= limit.waitedMs();
    }
  }

  /** Fail closed: no time limit, and a fault throws `storage_failed` naming the cause. */
  async #closed<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      if (isCompactError(error)) throw error;
      throw new CompactError('storage_failed', `session store "${this.#name}": ${describeCause(error)}`, {
        cause: error,
      });
    }
  }

  #back(key: string): void {
    this.#down = undefined;
    // The call that found the store back counts as affected too when an earlier operation of it failed.
    const affected = this.#affected;
    this.#affected = 0;
    this.#recovered(key, affected);
  }
}
