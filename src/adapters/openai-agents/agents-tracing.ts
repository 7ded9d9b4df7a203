import { CompactError } from '../../core/errors.js';

type AgentsModule = typeof import('@openai/agents');

let agentsModule: Promise<AgentsModule> | undefined;

/** Imports `@openai/agents` once, or throws `missing_dependency` with the install command. */
export function loadAgents(): Promise<AgentsModule> {
  agentsModule ??= import('@openai/agents').catch((error: unknown) => {
    agentsModule = undefined;
    throw new CompactError('missing_dependency', 'install @openai/agents: npm i @openai/agents', {
      cause: error,
    });
  });
  return agentsModule;
}

/** Where a compaction runs in the SDK's trace, passed on to the manager's events. */
export interface SpanPlacement {
  /** The SDK trace id, when a trace is active. */
  traceId?: string;
  /** The custom span's id, when a trace is active. */
  parentSpanId?: string;
}

/**
 * Runs `fn` inside an `agent.compaction` custom span of the active Agents SDK trace (so it
 * nests under the run), then stores the data `fn` returns on the span. Without an active trace
 * (or with tracing disabled) `fn` simply runs.
 */
export async function withCompactionSpan<T>(
  name: string,
  fn: (placement: SpanPlacement) => Promise<{ value: T; data: Record<string, unknown> }>,
): Promise<T> {
  const agents = await loadAgents();
  const trace = agents.getCurrentTrace();
  if (!trace) return (await fn({})).value;
  return agents.withCustomSpan(
    async (span) => {
      try {
        // A no-op span (tracing disabled) has placeholder ids: keep the session's own trace id.
        const recorded = span.toJSON() !== null;
        const { value, data } = await fn(
          recorded ? { traceId: span.traceId, parentSpanId: span.spanId } : {},
        );
        Object.assign(span.spanData.data, data);
        return value;
      } catch (error) {
        span.setError({ message: error instanceof Error ? error.message : String(error) });
        throw error;
      }
    },
    { data: { name, data: {} } },
  );
}
