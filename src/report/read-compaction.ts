/**
 * One compaction of a trace read from its events (decision, summary, outcome, levels, errors),
 * every field checked by a {@link TraceFieldReader} before use.
 */
import type { AnyCompactEvent, KeptCounts } from '../core/events/events.js';
import { type Fields, isFields, type TraceFieldReader } from './trace-fields.js';
import type { TraceCall, TraceCompaction, TraceError, TraceLevel } from './trace-types.js';

export type { Fields };

const LEVEL = 'compact.reduction';

/** An event's properties as untrusted fields (every value is checked before use). */
export const fieldsOf = (event: AnyCompactEvent, name: string): Fields | undefined =>
  event.name === name && isFields(event.properties) ? event.properties : undefined;

export function firstFields(events: readonly AnyCompactEvent[], name: string): Fields | undefined {
  for (const event of events) {
    const found = fieldsOf(event, name);
    if (found) return found;
  }
  return undefined;
}

export function errorsOf(events: readonly AnyCompactEvent[], read: TraceFieldReader): TraceError[] {
  const errors: TraceError[] = [];
  for (const event of events) {
    const error = fieldsOf(event, 'compact.error');
    if (!error) continue;
    const where = 'compact.error';
    errors.push({
      errorType: read.string(error, 'errorType', where) ?? 'unknown',
      message: read.string(error, 'message', where) ?? '',
      fallback: read.string(error, 'fallback', where) ?? 'unknown',
    });
  }
  return errors;
}

/** The kept counts, when every one is a finite number. */
function keptOf(fields: Fields | undefined, where: string, read: TraceFieldReader): KeptCounts | undefined {
  const kept = read.record(fields, 'kept', where);
  if (!kept) return undefined;
  const at = `${where}.kept`;
  const pinned = read.number(kept, 'pinned', at);
  const recentTurns = read.number(kept, 'recentTurns', at);
  const toolPairs = read.number(kept, 'toolPairs', at);
  if (pinned === undefined || recentTurns === undefined || toolPairs === undefined) return undefined;
  return { pinned, recentTurns, toolPairs };
}

function levelsOf(events: readonly AnyCompactEvent[], read: TraceFieldReader): TraceLevel[] {
  const levels: TraceLevel[] = [];
  for (const event of events) {
    const level = fieldsOf(event, LEVEL);
    if (!level) continue;
    const name = read.string(level, 'level', LEVEL);
    if (name === undefined) continue;
    levels.push({
      level: name,
      count: read.number(level, 'count', LEVEL) ?? 0,
      tokensSaved: read.number(level, 'tokensSaved', LEVEL) ?? 0,
      refs: read.strings(level, 'refs', LEVEL) ?? [],
    });
  }
  return levels;
}

export function compactionOf(
  call: TraceCall,
  events: readonly AnyCompactEvent[],
  number: number,
  read: TraceFieldReader,
): TraceCompaction {
  const DECISION = 'compact.trigger_decision';
  const PRUNED = 'compact.pruned_messages';
  const SUMMARY = 'compact.summary_created';
  const decision = firstFields(events, DECISION);
  const pruned = firstFields(events, PRUNED);
  const summary = firstFields(events, SUMMARY);
  const errors = errorsOf(events, read);
  const compaction: TraceCompaction = {
    number,
    call,
    reason: read.string(decision, 'reason', DECISION) ?? 'unknown',
    manual: read.boolean(decision, 'manual', DECISION) === true,
    tokensBefore: read.number(pruned, 'tokensBefore', PRUNED) ?? call.tokens,
    tokensAfter: call.tokensSent,
    levels: levelsOf(events, read),
    errors,
    fallback: errors.at(-1)?.fallback ?? 'none',
  };
  const note = read.string(decision, 'note', DECISION);
  if (note !== undefined) compaction.note = note;
  const kept = keptOf(pruned, PRUNED, read) ?? keptOf(decision, DECISION, read);
  if (kept) compaction.kept = kept;
  const prunedCount = read.number(pruned, 'prunedCount', PRUNED);
  if (prunedCount !== undefined) compaction.prunedCount = prunedCount;
  const version =
    read.number(pruned, 'version', PRUNED) ??
    read.number(summary, 'version', SUMMARY) ??
    read.number(firstFields(events, LEVEL), 'version', LEVEL);
  if (version !== undefined) compaction.version = version;
  if (summary) {
    const text = read.string(summary, 'summary', SUMMARY);
    if (text !== undefined) compaction.summary = text;
    const summarizer = read.string(summary, 'summarizer', SUMMARY);
    if (summarizer !== undefined) compaction.summarizer = summarizer;
    const strategy = read.string(summary, 'strategy', SUMMARY);
    if (strategy !== undefined) compaction.strategy = strategy;
    const summaryTokens = read.number(summary, 'summaryTokens', SUMMARY);
    if (summaryTokens !== undefined) compaction.summaryTokens = summaryTokens;
    const inputMessages = read.number(summary, 'inputMessages', SUMMARY);
    if (inputMessages !== undefined) compaction.summarizedMessages = inputMessages;
  }
  return compaction;
}
