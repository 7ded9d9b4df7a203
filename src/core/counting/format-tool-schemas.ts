/**
 * Tool (function) schemas rendered the way OpenAI injects them into the prompt, which is
 * what makes schema counts match the API's.
 */

/** A tool schema in any of the supported shapes, normalized. */
interface ToolSchema {
  name: string;
  description?: string;
  parameters?: unknown;
}

function normalizeTool(tool: unknown): ToolSchema | undefined {
  if (tool === null || typeof tool !== 'object') return undefined;
  const t = tool as Record<string, unknown>;
  const fn = (t.function ?? t) as Record<string, unknown>;
  if (typeof fn.name !== 'string') return undefined;
  const parameters = fn.parameters ?? fn.input_schema ?? fn.inputSchema;
  const out: ToolSchema = { name: fn.name };
  if (typeof fn.description === 'string') out.description = fn.description;
  if (parameters !== undefined) out.parameters = parameters;
  return out;
}

function formatType(schema: Record<string, unknown>, indent: string): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  switch (schema.type) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'null':
      return String(schema.type);
    case 'integer':
      return 'number';
    case 'array': {
      const items = (schema.items ?? {}) as Record<string, unknown>;
      return `${formatType(items, indent)}[]`;
    }
    case 'object':
      return `{\n${formatProperties(schema, `${indent}  `)}${indent}}`;
    default:
      return 'any';
  }
}

function formatProperties(schema: Record<string, unknown>, indent: string): string {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  let out = '';
  for (const [key, value] of Object.entries(properties)) {
    if (typeof value?.description === 'string') out += `${indent}// ${value.description}\n`;
    out += `${indent}${key}${required.has(key) ? '' : '?'}: ${formatType(value ?? {}, indent)},\n`;
  }
  return out;
}

/**
 * Renders function definitions the way OpenAI injects them into the prompt (a TypeScript
 * namespace), which is what makes schema counts match the API's.
 */
export function formatToolSchemas(tools: readonly unknown[]): { text: string; unknown: unknown[] } {
  const unknown: unknown[] = [];
  let text = 'namespace functions {\n\n';
  for (const tool of tools) {
    const schema = normalizeTool(tool);
    if (!schema) {
      unknown.push(tool);
      continue;
    }
    if (schema.description) text += `// ${schema.description}\n`;
    const parameters = schema.parameters as Record<string, unknown> | undefined;
    if (parameters && typeof parameters === 'object' && Object.keys(parameters.properties ?? {}).length > 0) {
      text += `type ${schema.name} = (_: {\n${formatProperties(parameters, '')}}) => any;\n\n`;
    } else {
      text += `type ${schema.name} = () => any;\n\n`;
    }
  }
  text += '} // namespace functions';
  return { text, unknown };
}
