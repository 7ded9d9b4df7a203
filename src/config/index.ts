/**
 * `agent-compaction/config`: `compact.yaml` / JSON configuration. {@link loadConfig} reads and
 * validates a file (with `COMPACT_*` environment overrides), {@link resolveConfig} does the
 * same for an object, and {@link toManagerOptions} turns the result into `CompactManager`
 * options, importing only the SDKs the config names. Errors are `CompactError` with code
 * `invalid_config` and one issue per field.
 *
 * @example
 * ```ts
 * import { CompactManager } from 'agent-compaction';
 * import { loadConfig, toManagerOptions } from 'agent-compaction/config';
 *
 * const manager = new CompactManager(await toManagerOptions(await loadConfig({ file: 'compact.yaml' })));
 * ```
 *
 * @packageDocumentation
 */

export type {
  AiSdkModelLike,
  AnthropicClientLike,
  ConfigRuntimeOptions,
  OpenAiClientLike,
} from './config-runtime-options.js';
export {
  CONFIG_VERSION,
  type CompactConfig,
  type CompactConfigInput,
  compactConfigSchema,
} from './config-schema.js';
export {
  type ConfigOverrides,
  type LoadConfigOptions,
  loadConfig,
  type ResolveConfigOptions,
  resolveConfig,
} from './load-config.js';
export { type ConfigManagerOptions, toManagerOptions } from './to-manager-options.js';
