import { invalidMessage } from './errors.js';
import type { ParsedMessage } from './formats/message-codec.js';

/** The minimum a partition needs to know about a message. */
export interface PartitionInput {
  readonly parsed: Pick<ParsedMessage, 'role' | 'kind' | 'toolCalls' | 'toolResults' | 'meta'>;
}

/** Which messages are pinned, given the policy. */
export interface PinRule {
  rolesNeverPrune: readonly string[];
  protectedFlag: string;
}

/** True when the message is never pruned: a never-prune role, or `meta[protectedFlag] === true`. */
export function isPinned(message: PartitionInput, rule: PinRule): boolean {
  return (
    rule.rolesNeverPrune.includes(message.parsed.role) || message.parsed.meta?.[rule.protectedFlag] === true
  );
}

/**
 * A unit that is kept or summarized as a whole: one conversational message, or a tool
 * block (every call of a group with all of its results, and the reasoning items before
 * them, including anything interleaved).
 */
export interface Unit {
  /** Positions (in the partitioned list) of the unit's messages, ascending. */
  members: number[];
  /** True for a tool call/result block. */
  tool: boolean;
  /** True when the unit opens a turn (a user message that is not only tool results). */
  startsTurn: boolean;
}

/**
 * Groups the non-pinned, non-summary messages into atomic units. Tool calls and results
 * are joined by call id; blocks whose spans overlap are merged, so parallel calls and
 * interleaved results stay together. Reasoning items join the unit that follows them.
 * (Orphan results are rejected earlier, by {@link assertNoOrphanResults}.)
 */
export function buildUnits(messages: readonly PartitionInput[], candidates: readonly number[]): Unit[] {
  const callSite = new Map<string, number>();
  for (let c = 0; c < candidates.length; c++) {
    for (const call of messages[candidates[c]!]!.parsed.toolCalls) callSite.set(call.id, c);
  }
  // Span end of each candidate's tool block start (in candidate positions).
  const spanEnd = new Array<number>(candidates.length).fill(-1);
  for (let c = 0; c < candidates.length; c++) {
    const message = messages[candidates[c]!]!;
    for (const result of message.parsed.toolResults) {
      const site = callSite.get(result.callId);
      if (site === undefined) continue;
      if (site <= c) spanEnd[site] = Math.max(spanEnd[site]!, c);
      else spanEnd[c] = Math.max(spanEnd[c]!, site);
    }
    if (message.parsed.toolCalls.length > 0) spanEnd[c] = Math.max(spanEnd[c]!, c);
  }
  const units: Unit[] = [];
  let pendingReasoning: number[] = [];
  for (let c = 0; c < candidates.length; c++) {
    const message = messages[candidates[c]!]!;
    if (message.parsed.kind === 'reasoning') {
      pendingReasoning.push(c);
      continue;
    }
    let end = spanEnd[c]!;
    const isTool = end >= 0 || message.parsed.toolResults.length > 0;
    if (!isTool) {
      const startsTurn = message.parsed.role === 'user';
      units.push({ members: [...pendingReasoning, c], tool: false, startsTurn });
      pendingReasoning = [];
      continue;
    }
    let last = c;
    while (last < end) {
      last++;
      end = Math.max(end, spanEnd[last]!);
    }
    const members = [...pendingReasoning];
    for (let k = c; k <= last; k++) members.push(k);
    units.push({ members, tool: true, startsTurn: false });
    pendingReasoning = [];
    c = last;
  }
  if (pendingReasoning.length > 0) units.push({ members: pendingReasoning, tool: false, startsTurn: false });
  return units;
}

/**
 * Throws `invalid_messages` naming the index of the first tool result whose call is not in
 * the history: providers reject such a request, and compaction could not keep it whole.
 */
export function assertNoOrphanResults(messages: readonly PartitionInput[]): void {
  const calls = new Set<string>();
  for (const message of messages) for (const call of message.parsed.toolCalls) calls.add(call.id);
  messages.forEach((message, index) => {
    for (const result of message.parsed.toolResults) {
      if (!calls.has(result.callId)) {
        throw invalidMessage(
          index,
          'tool result',
          `answers call "${result.callId}", which is not in the history (orphan tool result)`,
        );
      }
    }
  });
}

/**
 * Extends pinning to whole tool groups: when a pinned message takes part in a tool call,
 * every message of that call (the call and all its results) is pinned too, so pinning never
 * splits a pair.
 */
export function pinToolGroups(messages: readonly PartitionInput[], pinned: boolean[]): void {
  const pinnedIds = new Set<string>();
  messages.forEach((message, i) => {
    if (!pinned[i]) return;
    for (const call of message.parsed.toolCalls) pinnedIds.add(call.id);
    for (const result of message.parsed.toolResults) pinnedIds.add(result.callId);
  });
  if (pinnedIds.size === 0) return;
  let changed = true;
  while (changed) {
    changed = false;
    messages.forEach((message, i) => {
      if (pinned[i]) return;
      const ids = [
        ...message.parsed.toolCalls.map((c) => c.id),
        ...message.parsed.toolResults.map((r) => r.callId),
      ];
      if (ids.some((id) => pinnedIds.has(id))) {
        pinned[i] = true;
        for (const id of ids) pinnedIds.add(id);
        changed = true;
      }
    });
  }
}

/**
 * Keeps reasoning items with the item they belong to (the next one) when pinning moves
 * messages to the front: reasoning before a pinned item is pinned, and a pinned reasoning
 * item pins the item after it. Returns true when anything changed.
 */
export function pinReasoning(messages: readonly PartitionInput[], pinned: boolean[]): boolean {
  let changed = false;
  const isReasoning = (i: number) => messages[i]!.parsed.kind === 'reasoning';
  for (let i = 0; i < messages.length; i++) {
    if (!pinned[i] || !isReasoning(i)) continue;
    let j = i + 1;
    while (j < messages.length && isReasoning(j)) j++;
    for (let k = i + 1; k <= Math.min(j, messages.length - 1); k++) {
      if (!pinned[k]) {
        pinned[k] = true;
        changed = true;
      }
    }
  }
  for (let i = messages.length - 2; i >= 0; i--) {
    if (isReasoning(i) && pinned[i + 1] && !pinned[i]) {
      pinned[i] = true;
      changed = true;
    }
  }
  return changed;
}

/** Pins whole tool groups and reasoning chains until nothing changes. */
export function closePinned(messages: readonly PartitionInput[], pinned: boolean[]): void {
  do pinToolGroups(messages, pinned);
  while (pinReasoning(messages, pinned));
}

/** The result of choosing what to keep. */
export interface KeepSelection {
  /** Candidate positions kept verbatim. */
  kept: Set<number>;
  /** Conversational turns kept. */
  recentTurns: number;
  /** Tool blocks kept. */
  toolPairs: number;
}

/**
 * Keeps the last `keepRecentTurns` turns' conversational messages (a turn starts at a user
 * message) and the last `keepToolIoPairs` tool blocks; everything else is remainder.
 */
export function selectRecent(
  units: readonly Unit[],
  keepRecentTurns: number,
  keepToolIoPairs: number,
): KeepSelection {
  const kept = new Set<number>();
  let toolPairs = 0;
  for (let u = units.length - 1; u >= 0 && toolPairs < keepToolIoPairs; u--) {
    const unit = units[u]!;
    if (!unit.tool) continue;
    for (const m of unit.members) kept.add(m);
    toolPairs++;
  }
  let turns = 0;
  let turnStart = units.length;
  for (let u = units.length - 1; u >= 0; u--) {
    if (units[u]!.startsTurn) {
      turns++;
      turnStart = u;
      if (turns >= keepRecentTurns) break;
    }
  }
  // Messages after the last user message (an assistant reply still being produced) count
  // with the latest turn; with no user message at all, the trailing messages form one turn.
  if (turns === 0) {
    turnStart = units.findLastIndex((unit) => unit.tool) + 1;
    if (turnStart < units.length) turns = 1;
  }
  for (let u = turnStart; u < units.length; u++) {
    const unit = units[u]!;
    if (unit.tool) continue;
    for (const m of unit.members) kept.add(m);
  }
  return { kept, recentTurns: turns, toolPairs };
}
