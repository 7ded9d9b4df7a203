/**
 * The structured-output schema a request sends beside its messages: OpenAI Chat's
 * `response_format` (`{type: 'json_schema', json_schema}`), Responses' `text.format`, Anthropic's
 * `output_format` (or `output_config.format`), the AI SDK's `responseFormat`, an agent's output
 * type. The provider puts it in the prompt, so the manager counts it with the tool schemas:
 * {@link withResponseSchema} adds it to the `tools` it is given.
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A format that carries a schema (a plain `text` or `json_object` format sends none). */
function schemaFormat(value: unknown): Record<string, unknown> | undefined {
  if (!isRecord(value)) return undefined;
  if (value.type === 'text' || value.type === 'json_object') return undefined;
  return value;
}

/**
 * The structured-output format a provider request body sends, in any of the three wire
 * formats, as sent (`undefined` when it asks for none or for plain JSON without a schema).
 */
export function bodyResponseSchema(body: Record<string, unknown> | undefined): unknown {
  if (body === undefined) return undefined;
  const text = isRecord(body.text) ? body.text : undefined;
  const config = isRecord(body.output_config) ? body.output_config : undefined;
  return (
    schemaFormat(body.response_format) ??
    schemaFormat(text?.format) ??
    schemaFormat(body.output_format) ??
    schemaFormat(config?.format)
  );
}

/**
 * `tools` with the response schema appended as one entry the tool counter counts as its JSON
 * (wrapped so that a `name` field does not make it read as a function without parameters).
 * `tools` itself when there is no schema; `undefined` when there is neither.
 */
export function withResponseSchema(
  tools: readonly unknown[] | undefined,
  schema: unknown,
): readonly unknown[] | undefined {
  if (schema === undefined || schema === null) return tools;
  return [...(tools ?? []), { response_format: schema }];
}

/** The call option `tools` for a request body: its tool schemas and its response schema, if any. */
export function bodyCountedTools(body: Record<string, unknown> | undefined): { tools?: readonly unknown[] } {
  if (body === undefined) return {};
  const own = Array.isArray(body.tools) && body.tools.length > 0 ? (body.tools as unknown[]) : undefined;
  const tools = withResponseSchema(own, bodyResponseSchema(body));
  return tools && tools.length > 0 ? { tools } : {};
}
