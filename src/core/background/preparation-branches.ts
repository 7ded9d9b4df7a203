/**
 * The preparations a manager keeps, by session key: a few per key, one per branch (a
 * session's forks each have theirs, at most {@link MAX_BRANCHES_KEPT}), oldest first. It
 * only keeps them: which to drop it says, and `BackgroundPreparations` drops them (counted,
 * aborted, their jobs withdrawn).
 */

import type { SessionState } from '../session/session-store.js';
import { branchMovedOn } from './branch-prepared.js';
import type { Preparation } from './preparation.js';

/** Preparations of one session kept at most (its forks'); the oldest go first. */
export const MAX_BRANCHES_KEPT = 4;

/** The preparations kept by session key, one per branch, at most `maxKept` sessions. */
export class PreparationBranches {
  readonly #entries = new Map<string, Preparation[]>();
  readonly #maxKept: number;

  /** `maxKept`: sessions kept at most (the oldest go first). */
  constructor(maxKept: number) {
    this.#maxKept = maxKept;
  }

  /** Preparations kept, over all sessions. */
  get size(): number {
    return [...this.#entries.values()].reduce((sum, list) => sum + list.length, 0);
  }

  /** The preparations kept for `key`, oldest first. */
  of(key: string): readonly Preparation[] {
    return this.#entries.get(key) ?? [];
  }

  /** Every kept preparation with its session key. */
  *all(): Generator<[string, Preparation]> {
    for (const [key, list] of this.#entries) for (const preparation of list) yield [key, preparation];
  }

  /** Adds a preparation of `key`, after those kept (room made with {@link crowded}). */
  add(key: string, preparation: Preparation): void {
    this.#entries.set(key, [...this.of(key), preparation]);
  }

  remove(key: string, preparation: Preparation): void {
    const rest = this.of(key).filter((p) => p !== preparation);
    if (rest.length > 0) this.#entries.set(key, rest);
    else this.#entries.delete(key);
  }

  /** The preparations of `key` whose branch moved on in `record` and that `only` allows. */
  movedOn(key: string, record: SessionState | undefined, only = (_p: Preparation) => true): Preparation[] {
    return this.of(key).filter((p) => only(p) && branchMovedOn(record, p));
  }

  /**
   * What goes before a new branch of `key` is added: its oldest when it has
   * {@link MAX_BRANCHES_KEPT}, then, while `maxKept` sessions are kept, the oldest session's.
   * Each is to be dropped, which removes it, before the next is asked for.
   */
  *crowded(key: string): Generator<[string, Preparation]> {
    const kept = this.of(key);
    if (kept.length >= MAX_BRANCHES_KEPT) yield [key, kept[0]!];
    while (this.#entries.size >= this.#maxKept) {
      const [oldest, list] = this.#entries.entries().next().value as [string, Preparation[]];
      for (const preparation of list) yield [oldest, preparation];
    }
  }
}
