import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onProcessCachesRelease } from '../process-caches.js';

let requireFromHere = createRequire(import.meta.url);
let folder: string | undefined;
/** Module cache entries of the package that were there before this module's first require. */
let loadedElsewhere: Set<string> | undefined;

/**
 * The folder of the `gpt-tokenizer` package this module would load: the first
 * `node_modules/gpt-tokenizer` up from here, as Node's own lookup walks; through Node's
 * resolution only when there is none (another layout, such as Yarn's Plug'n'Play). Resolving
 * a package through its `exports` runs a large expression that V8 compiles to machine code
 * from its second use (83 KB the process keeps for good, issue 47 point 4); importing this
 * library already ran it once.
 */
function packageFolder(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', 'gpt-tokenizer');
    // Its real path, as Node keys its module cache (pnpm links packages into node_modules).
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(dir) === dir) return dirname(requireFromHere.resolve('gpt-tokenizer/package.json'));
  }
}

/** The path of a module of gpt-tokenizer's CommonJS build (`GptEncoding`, `bpeRanks/o200k_base`). */
export function gptTokenizerFile(module: string): string {
  folder ??= packageFolder();
  return join(folder, 'cjs', `${module}.js`);
}

/** Whether `path` is a file of the package. */
function inPackage(path: string): boolean {
  return folder !== undefined && path.startsWith(`${folder}${sep}`);
}

/**
 * Requires a module of gpt-tokenizer's CommonJS build by its path ({@link gptTokenizerFile}).
 * The modules it loaded leave Node's module cache when the last manager shuts down (their
 * records, sources and exports: about 0.1 MB); a later load gets them anew.
 */
export function requireGptTokenizer(module: string): unknown {
  const path = gptTokenizerFile(module);
  loadedElsewhere ??= new Set(Object.keys(requireFromHere.cache).filter(inPackage));
  return requireFromHere(path);
}

onProcessCachesRelease(() => {
  if (!loadedElsewhere) return;
  const cache = requireFromHere.cache;
  for (const path of Object.keys(cache))
    if (inPackage(path) && !loadedElsewhere.has(path)) delete cache[path];
  loadedElsewhere = undefined;
  // The require function's own module lists what it loaded (`children`): a new one holds none.
  requireFromHere = createRequire(import.meta.url);
});
