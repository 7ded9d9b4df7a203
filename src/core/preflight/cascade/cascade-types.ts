/** What the levels of the reduction cascade share. */

import type { IndexedMessage } from '../../messages/message-index.js';
import type { CompactPolicy } from '../../policy.js';
import type { SessionRewrite } from '../../session/session-store.js';
import type { RealizedRewrite, ViewEntry } from '../view/session-view.js';

export type { CascadeLevel, LevelReport } from '../../manager/manager-options.js';

/** A rewrite made by this compaction: its original goes to the archive first. */
export interface NewRewrite {
  item: IndexedMessage;
  rewrite: SessionRewrite;
  /** The tool's name, for tool results and arguments. */
  toolName?: string;
}

/** The working state of one cascade run (entries are this run's copies). */
export interface CascadeRun {
  /** The view, pinned and unpinned, in history order. */
  entries: ViewEntry[];
  /** Tokens of the request as it stands. */
  total: number;
  /** The soft goal and the hard limit. */
  target: number;
  budget: number;
  /** What the request may take with its newest message whole (the budget, or more: `Decision.limit`). */
  limit: number;
  readonly policy: Readonly<CompactPolicy>;
  /** Rewrites made in this run. */
  readonly rewrites: NewRewrite[];
  /** Realizes a rewrite of a message (cached). */
  readonly realize: (item: IndexedMessage, rewrite: SessionRewrite) => RealizedRewrite;
}

/** Where a cascade run takes its goals and tools from (a triggered request's). */
export interface CascadeRunSource {
  readonly decision: { readonly targetTokens: number; readonly budget: number; readonly limit: number };
  readonly policy: Readonly<CompactPolicy>;
  readonly realize: CascadeRun['realize'];
}

/** A new cascade run over `entries` (this run's copies) at `total` tokens. */
export function cascadeRun(source: CascadeRunSource, entries: ViewEntry[], total: number): CascadeRun {
  const { decision } = source;
  return {
    entries,
    total,
    target: decision.targetTokens,
    budget: decision.budget,
    limit: decision.limit,
    policy: source.policy,
    rewrites: [],
    realize: source.realize,
  };
}

/**
 * `entry` with `rewrite` applied: one literal of every field (one hidden class, its fields in
 * the object). A spread built a hidden class per rewritten message once its site had seen
 * several shapes, and `Object.assign({}, ...)` put the fields past the fourth in a properties
 * array of their own: one more object per rewritten message for the scavenges (issue 47).
 */
function rewrittenEntry(entry: ViewEntry, realized: RealizedRewrite, rewrite: SessionRewrite): ViewEntry {
  const next: ViewEntry = {
    item: entry.item,
    pinned: entry.pinned,
    round: entry.round,
    wire: realized.wire,
    tokens: realized.tokens,
    originalTokens: entry.originalTokens,
    rewrite,
  };
  if (entry.userText !== undefined) next.userText = entry.userText;
  if (entry.beforeBoundary !== undefined) next.beforeBoundary = entry.beforeBoundary;
  if (entry.content !== undefined) next.content = entry.content;
  return next;
}

/** Applies `rewrite` to entry `k` of `run`, updating the total. Returns the tokens saved. */
export function applyRewrite(run: CascadeRun, k: number, rewrite: SessionRewrite, toolName?: string): number {
  const entry = run.entries[k]!;
  const realized = run.realize(entry.item, rewrite);
  const saved = entry.tokens - realized.tokens;
  if (saved <= 0) return 0;
  run.entries[k] = rewrittenEntry(entry, realized, rewrite);
  run.total -= saved;
  run.rewrites.push({ item: entry.item, rewrite, ...(toolName ? { toolName } : {}) });
  return saved;
}
