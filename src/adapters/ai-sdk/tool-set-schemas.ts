import type { ToolSet } from 'ai';
import { withResponseSchema } from '../../core/preflight/body/response-schema.js';
import { loadAi } from './load-ai.js';

/** Each tool set's schemas, read once (a `ToolSet` is usually one object for the whole loop). */
const read = new WeakMap<ToolSet, Promise<unknown[]>>();

/**
 * The function tools of an AI SDK `ToolSet` as schemas the token counter reads: each tool's
 * name, description and input schema as JSON Schema, as `generateText` sends them (provider
 * tools, whose schemas the provider defines, are left out). Read once per tool set.
 */
export function toolSetSchemas(tools: ToolSet): Promise<unknown[]> {
  let schemas = read.get(tools);
  if (schemas === undefined) {
    schemas = readSchemas(tools);
    read.set(tools, schemas);
    // A failed read (no `ai` installed, a schema that throws) is tried again next time.
    schemas.catch(() => read.delete(tools));
  }
  return schemas;
}

async function readSchemas(tools: ToolSet): Promise<unknown[]> {
  const { asSchema } = await loadAi();
  const functions = Object.entries(tools).filter(
    ([, tool]) => tool.type === undefined || tool.type === 'function' || tool.type === 'dynamic',
  );
  return Promise.all(
    functions.map(async ([name, tool]) => ({
      type: 'function',
      name,
      description: tool.description ?? '',
      parameters: await asSchema(tool.inputSchema).jsonSchema,
    })),
  );
}

/**
 * A call's structured-output schema (`responseFormat: {type: 'json', schema}`) as the provider
 * sends it (OpenAI's `response_format`), one entry for the tool schemas counted: the prompt
 * carries it. None for plain text or JSON without a schema.
 */
export function callResponseSchema(format: unknown): unknown[] {
  const f = format as { type?: unknown; schema?: unknown; name?: unknown; description?: unknown } | undefined;
  if (f?.type !== 'json' || f.schema === undefined) return [];
  const sent = {
    type: 'json_schema',
    json_schema: {
      name: typeof f.name === 'string' ? f.name : 'response',
      ...(typeof f.description === 'string' ? { description: f.description } : {}),
      schema: f.schema,
      strict: true,
    },
  };
  return [...(withResponseSchema([], sent) ?? [])];
}

/** The function tools of a call as schemas the token counter reads. */
export function callToolSchemas(tools: readonly unknown[] | undefined): unknown[] {
  return (tools ?? []).flatMap((tool) => {
    const t = tool as {
      type?: string;
      name?: string;
      description?: string;
      inputSchema?: unknown;
      parameters?: unknown;
    };
    if (t.type !== undefined && t.type !== 'function') return [];
    if (typeof t.name !== 'string') return [];
    return [
      {
        type: 'function',
        name: t.name,
        description: t.description ?? '',
        parameters: t.inputSchema ?? t.parameters ?? {},
      },
    ];
  });
}
