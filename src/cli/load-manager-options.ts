import { ENV_OVERRIDES } from '../config/env-overrides.js';
import type { CompactManagerOptions } from '../core/manager/manager-options.js';
import { configFileFor } from './find-config-file.js';

/**
 * Manager options from a config file (`--config FILE`, else `COMPACT_CONFIG`, else one found
 * in the working directory: see `configFileFor`) and `COMPACT_*` environment variables (the
 * config module is loaded only here, so the CLI's other paths stay light). Only a variable that
 * sets a config option counts: `COMPACT_SUMMARY_KEY` and other variables read elsewhere load no
 * config (whose defaults archive to ./.compact/archive).
 */
export async function loadManagerOptions(
  flag: string | undefined,
  env: Record<string, string | undefined>,
  cwd: string = process.cwd(),
): Promise<CompactManagerOptions> {
  const file = configFileFor(flag, env, cwd);
  const hasEnv = ENV_OVERRIDES.some(({ variable }) => (env[variable] ?? '') !== '');
  if (file === undefined && !hasEnv) return {};
  const config = await import('../config/index.js');
  // The file COMPACT_CONFIG names is left for loadConfig to read from env, so that an error names the variable.
  const named = flag === undefined && file !== undefined && file === env.COMPACT_CONFIG;
  const loaded = await config.loadConfig({ ...(file !== undefined && !named ? { file } : {}), env });
  return config.toManagerOptions(loaded);
}
