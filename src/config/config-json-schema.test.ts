import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allKeyPaths } from './config-issues.js';
import { buildConfigJsonSchema, injectConfigReference, renderConfigReference } from './config-json-schema.js';
import { compactConfigSchema } from './config-schema.js';
import { ENV_OVERRIDES } from './env-overrides.js';

const ROOT = join(import.meta.dirname, '../..');

describe('generated artifacts', () => {
  it('schema/compact.schema.json equals the schema generated from zod', () => {
    const committed = readFileSync(join(ROOT, 'schema/compact.schema.json'), 'utf8');
    expect(committed, 'stale: run npx tsx scripts/generate-schema.ts').toBe(
      `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`,
    );
  });

  it('docs/configuration.md carries the current reference table', () => {
    const committed = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    expect(injectConfigReference(committed), 'stale: run npx tsx scripts/generate-schema.ts').toBe(committed);
  });

  it('documents every key and every environment variable', () => {
    const table = renderConfigReference();
    for (const path of allKeyPaths(compactConfigSchema)) {
      if (path[0] === '$schema') continue;
      expect(table).toContain(`\`${path.join('.')}\``);
    }
    for (const override of ENV_OVERRIDES) expect(table).toContain(`\`${override.variable}\``);
  });

  it('has an environment variable for every scalar setting, of the right type', () => {
    const schema = buildConfigJsonSchema() as {
      properties: Record<string, { properties?: Record<string, unknown> }>;
    };
    const leaf = (path: readonly string[]) => {
      let node: unknown = schema;
      for (const key of path) node = (node as { properties: Record<string, unknown> }).properties[key];
      return node as { type?: string; anyOf?: unknown[] };
    };
    const overridden = new Set(ENV_OVERRIDES.map((override) => override.path.join('.')));
    for (const path of allKeyPaths(compactConfigSchema)) {
      const node = leaf(path);
      const scalar =
        node.type === 'string' ||
        node.type === 'number' ||
        node.type === 'integer' ||
        node.type === 'boolean';
      if (!scalar || path[0] === 'version' || path[0] === '$schema' || path[1] === 'prompts') continue;
      expect(overridden, `no COMPACT_* variable for ${path.join('.')}`).toContain(path.join('.'));
    }
    for (const override of ENV_OVERRIDES) {
      const node = leaf(override.path);
      const expected =
        override.type === 'list'
          ? ['array', undefined]
          : [override.type, override.type === 'number' ? 'number' : node.type];
      expect(expected, override.variable).toContain(node.type);
    }
  });

  it('accepts the spec layout as JSON Schema input (defaults, no extra keys)', () => {
    const schema = buildConfigJsonSchema() as {
      $id: string;
      additionalProperties: boolean;
      properties: { policy: { properties: { trigger_pct: Record<string, unknown> } } };
    };
    expect(schema.$id).toContain('compact.schema.json');
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.policy.properties.trigger_pct).toMatchObject({
      exclusiveMinimum: 0,
      maximum: 1,
    });
    expect(schema.properties.policy.properties.trigger_pct.description).toContain('Default 0.85');
    expect((schema.properties.policy.properties as Record<string, unknown>).preset).toMatchObject({
      default: 'default',
      enum: ['default', 'quality', 'cost'],
    });
  });

  it('refuses a document without markers', () => {
    expect(() => injectConfigReference('# no markers')).toThrow('markers');
  });
});
