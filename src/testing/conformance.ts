/**
 * `agent-compaction/testing/conformance`: the contract suites a storage adapter, an archive,
 * a session store or an exporter of your own must pass. Each registers `vitest` tests
 * (`describe` / `it`), so `vitest` must be installed; `agent-compaction/testing` needs none.
 *
 * @example
 * ```ts
 * import { describeSessionStoreConformance } from 'agent-compaction/testing/conformance';
 * describeSessionStoreConformance({ name: 'my-store', async create() { ... } });
 * ```
 */
export {
  type ArtifactConformanceOptions,
  type ArtifactHarness,
  describeArtifactConformance,
} from './artifact-conformance.js';
export {
  describeExporterConformance,
  type ExporterConformanceOptions,
  type ExporterHarness,
} from './exporter-conformance.js';
export {
  describeSessionStoreConformance,
  type SessionStoreConformanceOptions,
  type SessionStoreHarness,
} from './session-store-conformance.js';
export {
  describeStorageConformance,
  type StorageConformanceOptions,
  type StorageHarness,
} from './storage-conformance.js';
