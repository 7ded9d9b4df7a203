/**
 * Builds dist/ (`tsc -p tsconfig.build.json --noCheck` and scripts/cjs-types.mjs, as `npm run build` does) when it is
 * missing or older than any source file. Tests of the built package, the bin and the
 * examples call it first, so a lone `npx vitest run FILE` works on a fresh clone; under
 * `npm test`, which builds first, it does nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** The time of the last build: dist/index.js and the bin are written by every build. */
function builtAt(): number {
  const outputs = ['dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js'].map((file) => join(ROOT, file));
  if (!outputs.every((file) => existsSync(file))) return 0;
  return Math.min(...outputs.map((file) => statSync(file).mtimeMs));
}

/** Builds dist/ when it is missing or stale. */
export function ensureBuilt(): void {
  if (builtAt() >= newestSource(join(ROOT, 'src'))) return;
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--noCheck'],
    { cwd: ROOT, stdio: 'pipe' },
  );
  // The CommonJS type twins of the subpaths that need them (as `npm run build` does).
  execFileSync(process.execPath, [join(ROOT, 'scripts/cjs-types.mjs')], { cwd: ROOT, stdio: 'pipe' });
}
