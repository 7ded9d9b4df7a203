/**
 * What the Agents runner sends beside the input and the function tools, and the manager must
 * count: each enabled handoff (a function tool of its own) and the agent's output type (the
 * Responses `text.format`, `{type: 'json_schema', name: 'output', strict, schema}`).
 */
import type { CallModelInputFilterArgs } from '@openai/agents';
import { z } from 'zod';
import { withResponseSchema } from '../../core/preflight/body/response-schema.js';
import { loadAgents } from './agents-tracing.js';

interface HandoffLike {
  toolName?: unknown;
  toolDescription?: unknown;
  inputJsonSchema?: unknown;
}

/** The agent's enabled handoffs as the function tools the runner sends for them. */
export async function handoffToolSchemas<TContext>(
  args: CallModelInputFilterArgs<TContext>,
): Promise<unknown[]> {
  const agent = args.agent as {
    handoffs?: readonly unknown[];
    getEnabledHandoffs?: (context: unknown) => Promise<readonly HandoffLike[]>;
  };
  if (!agent.handoffs?.length || typeof agent.getEnabledHandoffs !== 'function') return [];
  const { RunContext } = await loadAgents();
  const handoffs = await agent.getEnabledHandoffs(new RunContext(args.context as TContext));
  return handoffs.flatMap((handoff) =>
    typeof handoff.toolName === 'string'
      ? [
          {
            type: 'function',
            name: handoff.toolName,
            description: typeof handoff.toolDescription === 'string' ? handoff.toolDescription : '',
            parameters: handoff.inputJsonSchema ?? {},
          },
        ]
      : [],
  );
}

const outputSchemas = new WeakMap<object, unknown[]>();

/**
 * The agent's output type as the `text.format` the runner sends: a JSON schema definition as
 * given, a Zod schema rendered to JSON Schema (nothing when it cannot be). None for text.
 */
export function outputTypeSchema(agent: { readonly outputType?: unknown }): unknown[] {
  const type = agent.outputType;
  if (type === null || typeof type !== 'object') return [];
  const cached = outputSchemas.get(type);
  if (cached) return cached;
  const entries = [...(withResponseSchema([], sentFormat(type as Record<string, unknown>)) ?? [])];
  outputSchemas.set(type, entries);
  return entries;
}

function sentFormat(type: Record<string, unknown>): unknown {
  if (type.type === 'json_schema' && type.schema !== undefined) return type;
  try {
    const schema = z.toJSONSchema(type as unknown as z.ZodType, { unrepresentable: 'any' });
    return { type: 'json_schema', name: 'output', strict: true, schema };
  } catch {
    return undefined;
  }
}
