/**
 * Generates `schema/compact.schema.json` and the configuration table of
 * `docs/configuration.md` from the zod config schema (src/config/config-schema.ts).
 *
 *   tsx scripts/generate-schema.ts          # write them
 *   tsx scripts/generate-schema.ts --check  # exit 1 when either is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConfigJsonSchema, injectConfigReference } from '../src/config/config-json-schema.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schemaPath = join(root, 'schema', 'compact.schema.json');
const docsPath = join(root, 'docs', 'configuration.md');

const schemaText = `${JSON.stringify(buildConfigJsonSchema(), null, 2)}\n`;
const docsText = injectConfigReference(readFileSync(docsPath, 'utf8'));

const check = process.argv.includes('--check');
let stale = false;
for (const [path, text] of [
  [schemaPath, schemaText],
  [docsPath, docsText],
] as const) {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {}
  if (current === text) continue;
  if (check) {
    console.error(`stale: ${path} (run: npx tsx scripts/generate-schema.ts)`);
    stale = true;
  } else {
    writeFileSync(path, text);
    console.log(`wrote ${path}`);
  }
}
if (stale) process.exit(1);
