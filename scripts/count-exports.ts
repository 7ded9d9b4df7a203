/**
 * Prints the number of runtime exports (values, not types) of every entry in package.json's
 * `exports`, loaded from the build: `npx tsc -p tsconfig.build.json && npx tsx scripts/count-exports.ts`.
 * `--json` prints `{ entry: count }` instead of a table.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  exports: Record<string, string | { import: string }>;
};

const counts: Record<string, number> = {};
const seen = new Set<string>();
for (const [subpath, target] of Object.entries(pkg.exports)) {
  if (typeof target === 'string') continue; // schema.json, package.json
  if (seen.has(target.import)) continue; // a deprecated alias of an entry already counted
  seen.add(target.import);
  const module = (await import(pathToFileURL(join(root, target.import)).href)) as Record<string, unknown>;
  counts[subpath === '.' ? pkg.name : `${pkg.name}${subpath.slice(1)}`] = Object.keys(module).length;
}

if (process.argv.includes('--json')) console.log(JSON.stringify(counts, null, 2));
else
  for (const [entry, count] of Object.entries(counts)) console.log(`${String(count).padStart(4)}  ${entry}`);
