import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseDocument } from 'yaml';
import { CompactError, type CompactIssue } from '../core/errors.js';
import { configErrorMap, formatIssue, toCompactIssues } from './config-issues.js';
import { type CompactConfig, type CompactConfigInput, compactConfigSchema } from './config-schema.js';
import { CONFIG_FILE_ENV, readEnvOverrides } from './env-overrides.js';
import { findDuplicateKey } from './json-duplicate-key.js';
import { notUtf8 } from './utf8-text.js';

/** A deep partial of the config, in the file's snake_case layout (for programmatic overrides). */
export type ConfigOverrides = {
  [K in keyof CompactConfigInput]?: CompactConfigInput[K] extends infer V
    ? V extends readonly unknown[]
      ? V
      : V extends object
        ? { [P in keyof V]?: V[P] }
        : V
    : never;
};

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /**
   * Path of a `compact.yaml` / `compact.yml` / `compact.json` file (or a `.js` / `.mjs` module
   * whose default export is the config). Without one, the file
   * named by `COMPACT_CONFIG` is read, if set; otherwise only the environment and defaults apply.
   */
  file?: string;
  /**
   * Environment to read `COMPACT_*` overrides from.
   * @default process.env
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Values that beat the environment and the file (e.g. CLI flags), in the file's layout. */
  overrides?: ConfigOverrides;
  /**
   * Directory a relative `file` is resolved against.
   * @default process.cwd()
   */
  cwd?: string;
}

/** Options of {@link resolveConfig}. */
export interface ResolveConfigOptions {
  /** Environment to read overrides from; none when omitted. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Values that beat the environment and the file. */
  overrides?: ConfigOverrides;
  /**
   * Where the raw config came from, for error messages.
   * @default 'config'
   */
  source?: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Merges `patch` into `base` (a copy): objects recursively, everything else replaced. */
function mergeDeep(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? mergeDeep(current, value) : value;
  }
  return out;
}

/** `version: "1"` and `"1.0"` (the spec's form) mean 1; the schema then requires `version` to be 1. */
function withNumericVersion(raw: Record<string, unknown>): Record<string, unknown> {
  const { version } = raw;
  if (typeof version !== 'string' || !/^\d+(?:\.0+)?$/.test(version.trim())) return raw;
  return { ...raw, version: Number(version) };
}

function invalid(source: string, issues: CompactIssue[]): CompactError {
  const lines = issues.map(formatIssue);
  const message =
    lines.length === 1
      ? `${source}: ${lines[0]}`
      : `${source}: ${lines.length} problems:\n${lines.map((line) => `  - ${line}`).join('\n')}`;
  return new CompactError('invalid_config', message, { issues });
}

/**
 * Validates a raw config object (parsed YAML or JSON), applies environment overrides and
 * `overrides`, then defaults. Synchronous: use it when the object is already in memory.
 *
 * @throws CompactError `invalid_config` with `issues[]`, each naming its field path.
 * @example
 * ```ts
 * const config = resolveConfig({ model: 'gpt-4o', policy: { trigger_pct: 0.8 } }, { env: process.env });
 * ```
 */
export function resolveConfig(raw: unknown = {}, options: ResolveConfigOptions = {}): CompactConfig {
  const source = options.source ?? 'config';
  if (raw === null || raw === undefined) raw = {};
  if (!isPlainObject(raw)) {
    throw invalid(source, [{ path: [], message: 'must be a mapping of keys to values' }]);
  }
  const env = options.env
    ? readEnvOverrides(options.env)
    : { values: {}, origins: new Map<string, string>() };
  let merged = mergeDeep(withNumericVersion(raw), env.values);
  if (options.overrides) merged = mergeDeep(merged, options.overrides as Record<string, unknown>);
  const result = compactConfigSchema.safeParse(merged, { error: configErrorMap });
  if (!result.success) {
    throw invalid(
      source,
      toCompactIssues(result.error.issues, { schema: compactConfigSchema, origins: env.origins }),
    );
  }
  return result.data;
}

/** Parses YAML or JSON text into a raw object; `file` picks the parser by extension. */
export function parseConfigText(text: string, file = 'compact.yaml'): unknown {
  if (extname(file).toLowerCase() === '.json') {
    // A byte-order mark (Windows editors save one) is no JSON token: YAML skips it, so does JSON here.
    const json = text.startsWith('\uFEFF') ? text.slice(1) : text;
    let raw: unknown;
    try {
      raw = JSON.parse(json);
    } catch (error) {
      throw invalid(file, [{ path: [], message: `is not valid JSON: ${(error as Error).message}` }]);
    }
    // JSON.parse keeps a repeated key's last value; YAML refuses the key, and so does JSON here.
    const duplicate = findDuplicateKey(json);
    if (duplicate) {
      const message = `is given twice (line ${duplicate.line}; a key may appear once in an object)`;
      throw invalid(file, [{ path: duplicate.path, message }]);
    }
    return raw;
  }
  const document = parseDocument(text, { prettyErrors: true });
  // An unresolved tag (`model: !!js/function x`) is only a warning to the yaml package, which
  // reads the value as a plain string and prints Node's warning: a config takes it as an error.
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem !== undefined) {
    const at = problem.linePos?.[0];
    const where = at ? ` at line ${at.line}, column ${at.col}` : '';
    const what = problem.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw invalid(file, [{ path: [], message: `is not valid YAML${where}: ${what}` }]);
  }
  return document.toJS();
}

/** A `.js` / `.mjs` config: its default export (the same object a YAML file holds). */
async function importConfig(path: string, file: string): Promise<unknown> {
  try {
    const module = (await import(pathToFileURL(path).href)) as { default?: unknown };
    return module.default;
  } catch (error) {
    throw new CompactError('invalid_config', `${file}: cannot load: ${(error as Error).message}`, {
      cause: error,
      issues: [{ path: [], message: 'cannot load' }],
    });
  }
}

/**
 * Loads the configuration: defaults, then the file (YAML, JSON, or a `.js` / `.mjs` module's
 * default export), then `COMPACT_*`
 * environment variables, then `overrides`. Pass the result to {@link toManagerOptions}.
 *
 * @throws CompactError `invalid_config` naming the field path and rule, e.g.
 * `compact.yaml: policy.trigger_pct must be between 0 and 1 (exclusive of 0) (got 1.5)`.
 * @example
 * ```ts
 * const config = await loadConfig({ file: 'compact.yaml' });
 * const manager = new CompactManager(await toManagerOptions(config));
 * ```
 */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<CompactConfig> {
  const env = options.env ?? process.env;
  const file = options.file ?? env[CONFIG_FILE_ENV] ?? undefined;
  let raw: unknown = {};
  let source = 'config';
  if (file !== undefined && file !== '') {
    const path = resolve(options.cwd ?? process.cwd(), file);
    source = file;
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new CompactError(
        'invalid_config',
        `${code === 'ENOENT' ? `config file not found: ${path}` : `cannot read config file ${path}: ${code}`}${
          options.file === undefined ? ` (named by ${CONFIG_FILE_ENV})` : ''
        }`,
        { cause: error, issues: [{ path: [], message: `cannot read ${path}` }] },
      );
    }
    const problem = /\.m?js$/i.test(path) ? undefined : notUtf8(bytes);
    if (problem !== undefined) throw invalid(file, [{ path: [], message: problem }]);
    raw = /\.m?js$/i.test(path)
      ? await importConfig(path, file)
      : parseConfigText(bytes.toString('utf8'), file);
  }
  return resolveConfig(raw, {
    env,
    source,
    ...(options.overrides === undefined ? {} : { overrides: options.overrides }),
  });
}
