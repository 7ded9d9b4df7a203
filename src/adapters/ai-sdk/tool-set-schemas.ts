import type { ToolSet } from 'ai';
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
