import type { Attributes, Span, Tracer } from '@opentelemetry/api';
import type { AnyCompactEvent, CompactEvent, CompactEventName } from '../../core/events/events.js';
import { operationIdOf } from '../event-utils.js';
import type { OtelApi } from './otel-api.js';

/** The name of the compaction span. */
export const COMPACTION_SPAN_NAME = 'agent.compaction';
/** The name of the summarizer's model-call span. */
export const SUMMARIZER_SPAN_NAME = 'chat';

function find<N extends CompactEventName>(
  events: readonly AnyCompactEvent[],
  name: N,
): CompactEvent<N> | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    if (events[index]?.name === name) return events[index] as CompactEvent<N>;
  }
  return undefined;
}

function setNumber(attributes: Attributes, key: string, value: unknown): void {
  if (typeof value === 'number' && Number.isFinite(value)) attributes[key] = value;
}

/**
 * The attributes of an `agent.compaction` span, from the events of one operation:
 * `compaction.*` figures, `gen_ai.conversation.id`, and Langfuse's
 * `langfuse.observation.metadata.*` (strings) and `langfuse.observation.output` (the summary).
 */
export function compactionAttributes(events: readonly AnyCompactEvent[]): Attributes {
  const first = events[0];
  const estimate = find(events, 'compact.token_estimate');
  const decision = find(events, 'compact.trigger_decision');
  const summary = find(events, 'compact.summary_created');
  const pruned = find(events, 'compact.pruned_messages');
  const errors = events.filter((event) => event.name === 'compact.error');
  const archived = events.filter((event) => event.name === 'compact.archival');
  const attributes: Attributes = {};
  if (!first) return attributes;
  const sessionId = String(first.sessionId);
  const applied = pruned !== undefined;
  const tokensBefore =
    pruned?.properties.tokensBefore ?? estimate?.properties.tEst ?? decision?.properties.tEst;
  const tokensAfter = pruned?.properties.tokensAfter ?? (applied ? undefined : tokensBefore);
  attributes['gen_ai.conversation.id'] = sessionId;
  attributes['compaction.session_id'] = sessionId;
  const operationId = operationIdOf(first);
  if (operationId) attributes['compaction.operation_id'] = operationId;
  attributes['compaction.applied'] = applied;
  setNumber(attributes, 'compaction.tokens_before', tokensBefore);
  setNumber(attributes, 'compaction.tokens_after', tokensAfter);
  if (estimate) {
    attributes['compaction.model'] = String(estimate.properties.model);
    setNumber(attributes, 'compaction.max_tokens', estimate.properties.maxTokens);
    setNumber(attributes, 'compaction.usage_pct', estimate.properties.usagePct);
    setNumber(attributes, 'compaction.history_messages', estimate.properties.messageCount);
  }
  if (decision) {
    attributes['compaction.triggered'] = decision.properties.triggered === true;
    attributes['compaction.reason'] = String(decision.properties.reason);
    attributes['compaction.manual'] = decision.properties.manual === true;
    if (decision.properties.note) attributes['compaction.note'] = String(decision.properties.note);
    setNumber(attributes, 'compaction.budget', decision.properties.budget);
    setNumber(attributes, 'compaction.trigger_tokens', decision.properties.triggerTokens);
    if (decision.properties.policy?.strategy)
      attributes['compaction.strategy'] = String(decision.properties.policy.strategy);
    setNumber(attributes, 'compaction.keep_recent_turns', decision.properties.policy?.keepRecentTurns);
  }
  const kept = pruned?.properties.kept ?? decision?.properties.kept;
  if (kept) {
    setNumber(attributes, 'compaction.kept.pinned', kept.pinned);
    setNumber(attributes, 'compaction.kept.recent_turns', kept.recentTurns);
    setNumber(attributes, 'compaction.kept.tool_pairs', kept.toolPairs);
  }
  setNumber(
    attributes,
    'compaction.pruned',
    pruned?.properties.prunedCount ?? decision?.properties.prunedCount ?? 0,
  );
  if (summary) {
    attributes['compaction.strategy'] = String(summary.properties.strategy);
    attributes['compaction.summarizer'] = String(summary.properties.summarizer);
    setNumber(attributes, 'compaction.summary_tokens', summary.properties.summaryTokens);
    setNumber(attributes, 'compaction.input_messages', summary.properties.inputMessages);
    setNumber(attributes, 'compaction.compression_ratio', summary.properties.compressionRatio);
    setNumber(attributes, 'compaction.version', summary.properties.version);
    if (typeof summary.properties.summary === 'string') {
      attributes['langfuse.observation.output'] = summary.properties.summary;
    }
  }
  if (archived.length > 0) attributes['compaction.archived'] = archived.length;
  if (errors.length > 0) {
    attributes['compaction.errors'] = errors.length;
    attributes['compaction.fallback'] = String(errors.at(-1)?.properties.fallback ?? '');
  }
  const metadata: Record<string, unknown> = {
    traceId: first.traceId,
    historyMessages: estimate?.properties.messageCount,
    keepLastN: decision?.properties.policy?.keepRecentTurns,
    originalEstimatedTokens: tokensBefore,
    compactedEstimatedTokens: tokensAfter,
    compactionApplied: applied,
  };
  for (const [key, value] of Object.entries(metadata)) {
    if (value !== undefined && value !== null)
      attributes[`langfuse.observation.metadata.${key}`] = String(value);
  }
  return attributes;
}

/**
 * Completes an `agent.compaction` span from its operation's events: sets the attributes,
 * records each `compact.error` as an exception with an ERROR status, and adds a `chat` child
 * span for the summarizer's model call (when it made one) with `gen_ai.request.model` and
 * `gen_ai.usage.*`. Does not end `span`.
 */
export function recordCompaction(
  api: OtelApi,
  tracer: Tracer,
  span: Span,
  events: readonly AnyCompactEvent[],
): void {
  span.setAttributes(compactionAttributes(events));
  const errors = events.filter((event) => event.name === 'compact.error');
  for (const error of errors) {
    span.addEvent(
      'exception',
      {
        'exception.type': String(error.properties.errorType),
        'exception.message': String(error.properties.message),
        'compaction.fallback': String(error.properties.fallback),
      },
      error.startTime,
    );
  }
  if (errors.length > 0) {
    const last = errors.at(-1);
    span.setStatus({
      code: api.SpanStatusCode.ERROR,
      message: `${String(last?.properties.errorType)}: ${String(last?.properties.message)}`,
    });
  }
  const summary = find(events, 'compact.summary_created');
  if (summary && (summary.properties.model || summary.properties.usage)) {
    const parent = api.trace.setSpan(api.context.active(), span);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.conversation.id': String(summary.sessionId),
      'gen_ai.provider.name': String(summary.properties.summarizer),
    };
    if (summary.properties.model) attributes['gen_ai.request.model'] = String(summary.properties.model);
    setNumber(attributes, 'gen_ai.usage.input_tokens', summary.properties.usage?.inputTokens);
    setNumber(attributes, 'gen_ai.usage.output_tokens', summary.properties.usage?.outputTokens);
    if (typeof summary.properties.summary === 'string') {
      attributes['langfuse.observation.output'] = summary.properties.summary;
    }
    const chat = tracer.startSpan(
      SUMMARIZER_SPAN_NAME,
      { kind: api.SpanKind.CLIENT, startTime: summary.startTime, attributes },
      parent,
    );
    const summarizerFailed = errors.some((error) => /summar/i.test(String(error.properties.errorType)));
    if (summary.status === 'error' || summarizerFailed) chat.setStatus({ code: api.SpanStatusCode.ERROR });
    chat.end(Math.max(summary.endTime, summary.startTime));
  }
}
