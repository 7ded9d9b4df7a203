export { closestMatch, formatIssue, formatPath, levenshtein } from './config-issues.js';
export {
  buildConfigJsonSchema,
  CONFIG_REFERENCE_MARKERS,
  CONFIG_SCHEMA_ID,
  injectConfigReference,
  renderConfigReference,
} from './config-json-schema.js';
export {
  CONFIG_VERSION,
  CONSOLE_FORMATS,
  type CompactConfig,
  type CompactConfigInput,
  compactConfigSchema,
  DEFAULT_ARIADNE_URL,
  DEFAULT_STORAGE_PATH,
  EXPORTER_NAMES,
  policySchema,
  redactionSchema,
  STORAGE_ADAPTERS,
  SUMMARIZER_PROVIDERS,
  storageSchema,
  summarizerSchema,
  telemetrySchema,
} from './config-schema.js';
export {
  CONFIG_FILE_ENV,
  ENV_OVERRIDES,
  type EnvOverride,
  type EnvOverridesResult,
  type EnvValueType,
  readEnvOverrides,
} from './env-overrides.js';
export {
  type ConfigOverrides,
  type LoadConfigOptions,
  loadConfig,
  parseConfigText,
  type ResolveConfigOptions,
  resolveConfig,
} from './load-config.js';
export {
  CONFIG_MIGRATIONS,
  type ConfigMigration,
  configVersionOf,
  migrateConfig,
  type RawConfig,
} from './migrate-config.js';
export {
  type ConfigManagerOptions,
  exporterNamesOf,
  type ToManagerOptionsOptions,
  toCompactPolicy,
  toManagerOptions,
  toRedactionOption,
} from './to-manager-options.js';
