import { CompactError } from '../core/errors.js';
import { CONFIG_VERSION } from './config-schema.js';

/** A raw (unvalidated) config object, as read from a file. */
export type RawConfig = Record<string, unknown>;

/** Upgrades a raw config from one version to the next. */
export interface ConfigMigration {
  /** The version this migration reads. */
  from: number;
  /** Rewrites the object (returning a new one) into version `from + 1`. */
  migrate(config: RawConfig): RawConfig;
}

/**
 * Migrations, oldest first. Version 1 is the first format, so there are none yet; when a key
 * is renamed, add `{ from: 1, migrate }` here and bump {@link CONFIG_VERSION}.
 */
export const CONFIG_MIGRATIONS: readonly ConfigMigration[] = [];

/** Reads the `version` key: absent means current; `"1"` and `"1.0"` (the spec's form) mean 1. */
export function configVersionOf(config: RawConfig): number {
  const version = config.version;
  if (version === undefined) return CONFIG_VERSION;
  const number = typeof version === 'string' ? Number(version) : version;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 1) {
    throw new CompactError(
      'invalid_config',
      `version must be a positive integer such as ${CONFIG_VERSION} (got ${JSON.stringify(version)})`,
      {
        issues: [
          { path: ['version'], message: `must be a positive integer (got ${JSON.stringify(version)})` },
        ],
      },
    );
  }
  return number;
}

/**
 * Brings a raw config to {@link CONFIG_VERSION}, running each migration in turn. A config from
 * a newer version of this package is an error (it may mean things this version ignores).
 */
export function migrateConfig(
  config: RawConfig,
  migrations: readonly ConfigMigration[] = CONFIG_MIGRATIONS,
  target = CONFIG_VERSION,
): RawConfig {
  let version = configVersionOf(config);
  if (version > target) {
    throw new CompactError(
      'invalid_config',
      `version ${version} is newer than this agent-compaction supports (${target}): upgrade the package`,
      {
        issues: [
          {
            path: ['version'],
            message: `${version} is newer than this package supports (${target}): upgrade agent-compaction`,
          },
        ],
      },
    );
  }
  let current = config;
  while (version < target) {
    const step = migrations.find((migration) => migration.from === version);
    if (!step) {
      throw new CompactError(
        'invalid_config',
        `version ${version} cannot be migrated: no migration from it`,
        {
          issues: [{ path: ['version'], message: `has no migration to ${version + 1}` }],
        },
      );
    }
    current = step.migrate(current);
    version += 1;
  }
  return { ...current, version: target };
}
