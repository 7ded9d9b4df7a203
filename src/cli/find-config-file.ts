import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CompactError } from '../core/errors.js';

/**
 * The config files every command looks for in the working directory when neither
 * `--config FILE` nor `COMPACT_CONFIG` names one, in this order (docs/cli.md lists them).
 */
export const CONFIG_FILE_NAMES = [
  'compact.yaml',
  'compact.yml',
  'compact.json',
  'compact.config.yaml',
  'compact.config.yml',
  'compact.config.json',
  'compact.config.js',
  'compact.config.mjs',
] as const;

/**
 * The config file a command reads: `--config FILE`, else the file `COMPACT_CONFIG` names,
 * else the one of {@link CONFIG_FILE_NAMES} in `cwd` (two of them there is an error: which
 * one was meant is not guessed). Undefined when there is none.
 */
export function configFileFor(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): string | undefined {
  if (flag !== undefined) return flag;
  const named = env.COMPACT_CONFIG;
  if (named !== undefined && named !== '') return named;
  const found = CONFIG_FILE_NAMES.filter((name) => existsSync(join(cwd, name)));
  if (found.length > 1)
    throw new CompactError(
      'invalid_config',
      `${found.length} config files in ${cwd}: ${found.join(', ')}; keep one or pass --config FILE`,
      { issues: [{ path: ['config'], message: `found ${found.join(', ')}` }] },
    );
  return found[0] === undefined ? undefined : join(cwd, found[0]);
}
