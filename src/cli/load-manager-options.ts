import type { CompactManagerOptions } from '../core/manager/manager-options.js';

/**
 * Manager options from a config file and `COMPACT_*` environment variables (the config
 * module is loaded only here, so the CLI's other paths stay light).
 */
export async function loadManagerOptions(
  file: string | undefined,
  env: Record<string, string | undefined>,
): Promise<CompactManagerOptions> {
  const hasEnv = Object.keys(env).some((key) => key.startsWith('COMPACT_'));
  if (file === undefined && !hasEnv) return {};
  const config = await import('../config/index.js');
  const loaded = await config.loadConfig({ ...(file !== undefined ? { file } : {}), env });
  return config.toManagerOptions(loaded);
}
