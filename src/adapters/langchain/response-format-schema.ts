/**
 * An agent's `responseFormat` (createAgent) as the schema its model call sends: the provider
 * strategy's `response_format` (`{type: 'json_schema', json_schema: {name, schema}}`), or the
 * tool strategy's function tool of the same schema; either is in the prompt, so it is counted
 * with the tools. A Zod schema is rendered to JSON Schema (nothing when it cannot be).
 */
import { z } from 'zod';
import { withResponseSchema } from '../../core/preflight/body/response-schema.js';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The JSON Schema of one format: a strategy's `schema`, a Zod schema, or a JSON schema as given. */
function jsonSchemaOf(format: unknown): unknown {
  if (!isRecord(format)) return undefined;
  const inner = 'schema' in format && format.schema !== undefined ? format.schema : format;
  if (!isRecord(inner)) return undefined;
  if ('_zod' in inner || '_def' in inner) {
    try {
      return z.toJSONSchema(inner as unknown as z.ZodType, { unrepresentable: 'any' });
    } catch {
      return undefined;
    }
  }
  return 'type' in inner || 'properties' in inner || '$schema' in inner ? inner : undefined;
}

const cache = new WeakMap<object, unknown[]>();

/** The entries to count for a request's `responseFormat` (one per schema it sends). */
export function responseFormatSchemas(responseFormat: unknown): unknown[] {
  if (!isRecord(responseFormat) && !Array.isArray(responseFormat)) return [];
  const key = responseFormat as object;
  const cached = cache.get(key);
  if (cached) return cached;
  const formats = Array.isArray(responseFormat) ? responseFormat : [responseFormat];
  const entries = formats.flatMap((format) => {
    const schema = jsonSchemaOf(format);
    if (schema === undefined) return [];
    const sent = { type: 'json_schema', json_schema: { name: 'extract', schema, strict: true } };
    return [...(withResponseSchema([], sent) ?? [])];
  });
  cache.set(key, entries);
  return entries;
}
