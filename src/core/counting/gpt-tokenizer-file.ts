import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const requireFromHere = createRequire(import.meta.url);
let folder: string | undefined;

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
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) return dirname(requireFromHere.resolve('gpt-tokenizer/package.json'));
  }
}

/** The path of a module of gpt-tokenizer's CommonJS build (`GptEncoding`, `bpeRanks/o200k_base`). */
export function gptTokenizerFile(module: string): string {
  folder ??= packageFolder();
  return join(folder, 'cjs', `${module}.js`);
}

/** Requires a module of gpt-tokenizer's CommonJS build by its path ({@link gptTokenizerFile}). */
export function requireGptTokenizer(module: string): unknown {
  return requireFromHere(gptTokenizerFile(module));
}
