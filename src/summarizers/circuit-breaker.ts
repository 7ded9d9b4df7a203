/**
 * One circuit breaker per provider and model, shared by every session (and every summarizer
 * wrapper) of the process: a module-level registry keyed by `provider:model`. Closed, it lets
 * calls through and counts consecutive failures; at the threshold it opens and calls fail
 * fast for the cool-down; then it half-opens and lets exactly one probe through, whose success
 * closes it and whose failure opens it again. An optional {@link CircuitSharedState} hook
 * carries the state across processes (a shared store).
 */

/** A breaker's state. */
export type CircuitState = 'closed' | 'open' | 'half_open';

/** A state change: `open` (threshold reached or probe failed), `probe` (half-open call let through), `close`. */
export type CircuitTransition = 'open' | 'probe' | 'close';

/** What a breaker reports on each transition. */
export interface CircuitEvent {
  /** The breaker's key, `provider:model` (e.g. `openai:gpt-4o-mini`). */
  key: string;
  transition: CircuitTransition;
  /** Consecutive failures counted when the event happened. */
  failures: number;
  /** When the circuit opens: the epoch ms after which one probe is let through. */
  retryAt?: number;
  /** The error that opened the circuit, when it opened. */
  reason?: string;
  /** Epoch ms. */
  at: number;
}

/** The part of a breaker's state that can be shared between processes. */
export interface CircuitSnapshot {
  failures: number;
  /** Epoch ms until which calls fail fast; absent when closed. */
  openUntil?: number;
}

/**
 * A store that shares breaker state between processes (e.g. redis). Every method may be
 * async; a hook that throws or rejects is ignored (the breaker goes on with its own state).
 */
export interface CircuitSharedState {
  /** The shared state of `key`, or `undefined` when none. */
  read(key: string): Promise<CircuitSnapshot | undefined> | CircuitSnapshot | undefined;
  /** Stores the state of `key` after a transition or a failure. */
  write(key: string, snapshot: CircuitSnapshot): Promise<void> | void;
  /**
   * Claims the single half-open probe across processes for `ttlMs` (e.g. redis `SET NX PX`);
   * `true` when this process won. Without it, each process sends its own probe.
   */
  claimProbe?(key: string, ttlMs: number): Promise<boolean> | boolean;
}

/** Options of a breaker; the first wrapper to create a key's breaker sets them. */
export interface CircuitBreakerOptions {
  /** @default 3 */
  failureThreshold?: number;
  /** @default 60000 */
  cooldownMs?: number;
  /** Shares state across processes. @default none (this process only) */
  shared?: CircuitSharedState;
  /**
   * Start half-open: until the first success, calls go one at a time and the others fail fast
   * (the caller falls back), so a burst of new sessions against a provider that is down at
   * start sends one request at a time, not one per session.
   * @default true
   */
  startHalfOpen?: boolean;
  /** Clock, injectable for tests. @default Date.now */
  now?: () => number;
}

/** Defaults of the breaker. */
export const DEFAULT_CIRCUIT_BREAKER = { failureThreshold: 3, cooldownMs: 60_000 } as const;

/** A call let through: `probe` when it is the half-open probe after a cool-down, `trial` when it is a first call (start half-open). */
export interface CircuitPass {
  allowed: true;
  probe: boolean;
  trial: boolean;
}

/** The answer to {@link CircuitBreaker.acquire}. */
export type CircuitTicket =
  | CircuitPass
  | { allowed: false; state: CircuitState; failures: number; retryAt: number };

type Listener = (event: CircuitEvent) => void;

const globalListeners = new Set<Listener>();

async function quietly<T>(task: () => Promise<T> | T): Promise<T | undefined> {
  try {
    return await task();
  } catch {
    return undefined;
  }
}

/** The breaker of one key; get it with {@link circuitBreakerFor}. */
export class CircuitBreaker {
  readonly key: string;
  readonly failureThreshold: number;
  readonly cooldownMs: number;
  readonly #shared: CircuitSharedState | undefined;
  readonly #now: () => number;
  #failures = 0;
  #openUntil: number | undefined;
  #probing = false;
  /** A call has succeeded since creation (or the breaker does not start half-open). */
  #proven: boolean;

  constructor(key: string, options: CircuitBreakerOptions = {}) {
    this.key = key;
    this.failureThreshold = options.failureThreshold ?? DEFAULT_CIRCUIT_BREAKER.failureThreshold;
    this.cooldownMs = options.cooldownMs ?? DEFAULT_CIRCUIT_BREAKER.cooldownMs;
    this.#shared = options.shared;
    this.#now = options.now ?? Date.now;
    this.#proven = options.startHalfOpen === false;
  }

  /** The current state, consecutive failures and, when open, until when. */
  snapshot(): { state: CircuitState; failures: number; openUntil?: number } {
    if (this.#openUntil === undefined) return { state: 'closed', failures: this.#failures };
    const state = this.#probing || this.#now() >= this.#openUntil ? 'half_open' : 'open';
    return { state, failures: this.#failures, openUntil: this.#openUntil };
  }

  /**
   * Asks to make a call. Closed: allowed (before the first success, one at a time). Open:
   * refused until the cool-down ends, then the first caller is the probe (a `probe` event) and
   * the others are refused until it ends.
   */
  async acquire(onEvent?: Listener): Promise<CircuitTicket> {
    await this.#adoptShared();
    if (this.#openUntil === undefined) {
      if (this.#proven) return { allowed: true, probe: false, trial: false };
      if (this.#probing) return this.#refusal('half_open');
      this.#probing = true;
      return { allowed: true, probe: false, trial: true };
    }
    const now = this.#now();
    if (now < this.#openUntil || this.#probing) return this.#refusal(this.#probing ? 'half_open' : 'open');
    this.#probing = true;
    const claimed = this.#shared?.claimProbe
      ? await quietly(() => this.#shared!.claimProbe!(this.key, this.cooldownMs))
      : true;
    if (claimed === false) {
      this.#probing = false;
      return this.#refusal('half_open');
    }
    this.#emit({ key: this.key, transition: 'probe', failures: this.#failures, at: now }, onEvent);
    return { allowed: true, probe: true, trial: false };
  }

  /**
   * Records a successful call: closes the circuit, with a `close` event when it was not
   * closed. A call let through before the circuit opened that succeeds late closes it too: the
   * provider answers.
   */
  success(pass: CircuitPass, onEvent?: Listener): void {
    const wasOpen = this.#openUntil !== undefined;
    this.#failures = 0;
    this.#openUntil = undefined;
    this.#proven = true;
    if (pass.probe || pass.trial || !wasOpen) this.#probing = false;
    if (wasOpen) this.#emit({ key: this.key, transition: 'close', failures: 0, at: this.#now() }, onEvent);
    this.#publish();
  }

  /** Records a failed call (timeouts included, never the caller's own abort). */
  failure(pass: CircuitPass, reason: string, onEvent?: Listener): void {
    this.#failures++;
    if (pass.probe || pass.trial) this.#probing = false;
    if (pass.probe || (this.#openUntil === undefined && this.#failures >= this.failureThreshold)) {
      const at = this.#now();
      this.#openUntil = at + this.cooldownMs;
      this.#emit(
        { key: this.key, transition: 'open', failures: this.#failures, retryAt: this.#openUntil, reason, at },
        onEvent,
      );
    }
    this.#publish();
  }

  /** Ends a call that neither succeeded nor failed (the caller aborted it). */
  release(pass: CircuitPass): void {
    if (pass.probe || pass.trial) this.#probing = false;
  }

  #refusal(state: CircuitState): CircuitTicket {
    return { allowed: false, state, failures: this.#failures, retryAt: this.#openUntil ?? this.#now() };
  }

  async #adoptShared(): Promise<void> {
    if (!this.#shared) return;
    const remote = await quietly(() => this.#shared!.read(this.key));
    if (!remote) return;
    if (remote.openUntil !== undefined && remote.openUntil > (this.#openUntil ?? 0)) {
      this.#openUntil = remote.openUntil;
      this.#failures = Math.max(this.#failures, remote.failures);
    } else if (remote.openUntil === undefined && this.#openUntil !== undefined && !this.#probing) {
      // Another process's probe closed the circuit.
      this.#openUntil = undefined;
      this.#failures = remote.failures;
    }
  }

  #publish(): void {
    if (!this.#shared) return;
    const snapshot: CircuitSnapshot = {
      failures: this.#failures,
      ...(this.#openUntil === undefined ? {} : { openUntil: this.#openUntil }),
    };
    void quietly(() => this.#shared!.write(this.key, snapshot));
  }

  #emit(event: CircuitEvent, onEvent: Listener | undefined): void {
    for (const listener of [...globalListeners, ...(onEvent ? [onEvent] : [])]) {
      try {
        listener(event);
      } catch {
        // A listener must not break a summarization.
      }
    }
  }
}

const registry = new Map<string, CircuitBreaker>();

/**
 * The process-wide breaker of `key` (`provider:model`), created with `options` on first use;
 * later callers share it and its first options.
 *
 * @example
 * ```ts
 * const breaker = circuitBreakerFor('openai:gpt-4o-mini');
 * breaker.snapshot(); // { state: 'closed', failures: 0 }
 * ```
 */
export function circuitBreakerFor(key: string, options: CircuitBreakerOptions = {}): CircuitBreaker {
  let breaker = registry.get(key);
  if (!breaker) {
    breaker = new CircuitBreaker(key, options);
    registry.set(key, breaker);
  }
  return breaker;
}

/** Listens to every breaker's transitions in this process; returns the unsubscribe function. */
export function onCircuitEvent(listener: (event: CircuitEvent) => void): () => void {
  globalListeners.add(listener);
  return () => globalListeners.delete(listener);
}

/** Forgets every breaker (tests, or after reconfiguring thresholds). */
export function resetCircuitBreakers(): void {
  registry.clear();
}
