import type { S3Client } from '@aws-sdk/client-s3';
import type {
  ArchivedArtifact,
  ArchivedSummary,
  StorageAdapter,
} from '../../core/archive/storage-adapter.js';
import { CompactError } from '../../core/errors.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import {
  artifactFileName,
  assertArtifact,
  assertArtifactRef,
  newestArtifactFiles,
  parseStoredArtifact,
  readArtifacts,
} from '../artifact-ref.js';
import {
  ARCHIVE_NAMES,
  archiveWriteId,
  highestSummaryStep,
  type SessionFolderOptions,
  sessionFolderName,
} from '../session-path.js';
import { transcriptParts } from '../transcript-parts.js';
import { S3Objects } from './s3-objects.js';

/** The folder of a session's artifacts. */
const ARTIFACT_DIR = 'artifacts';
/** Artifact objects read at once by `listArtifacts`. */
const READ_CONCURRENCY = 8;

/** Options of {@link s3Storage}. */
export interface S3StorageOptions extends SessionFolderOptions {
  /** The bucket. */
  bucket: string;
  /**
   * A key prefix; the archive goes under `{prefix}/{session_id}/`. Leading and trailing
   * slashes are ignored.
   * @default ''
   */
  prefix?: string;
  /**
   * A KMS key id or ARN: every object is written with SSE-KMS
   * (`ServerSideEncryption: 'aws:kms'`, `SSEKMSKeyId`). Without it the bucket's default
   * encryption applies.
   * @default undefined
   */
  kmsKeyId?: string;
  /**
   * A ready S3 client (its credentials are its own). When omitted, one is created with the
   * SDK's default credential chain (environment, SSO, shared config, IAM role); this adapter
   * never takes keys in its options.
   * @default undefined
   */
  client?: S3Client;
  /**
   * Region of the client created when `client` is omitted.
   * @default the SDK's default (AWS_REGION, profile)
   */
  region?: string;
  /**
   * Endpoint of the client created when `client` is omitted (MinIO, LocalStack, s3rver).
   * @default AWS
   */
  endpoint?: string;
  /**
   * Time limit of one request to S3, in milliseconds: a request not answered by then (a
   * stalled server or network) is given up and fails as `storage_failed`, so a conversation
   * never waits on the archive for good (the SDK sets no limit).
   * @default 10000
   */
  requestTimeoutMs?: number;
  /**
   * Path-style addressing for the created client (needed by most S3-compatible servers).
   * @default false
   */
  forcePathStyle?: boolean;
}

/** The default time limit of one S3 request ({@link S3StorageOptions.requestTimeoutMs}). */
export const DEFAULT_S3_REQUEST_TIMEOUT_MS = 10_000;

/**
 * Archives to Amazon S3 (or any S3-compatible store), with the fs adapter's layout under
 * `s3://{bucket}/{prefix}/{session_id}/`:
 *
 * ```
 * {prefix}/{session_id}/transcript-pre-compact-001-{id}.jsonl (or .part.jsonl: the messages after the last one's)
 * {prefix}/{session_id}/summary-001-{id}.json               (the highest step: `latestSummaryStep`, the version floor)
 * {prefix}/{session_id}/events/{epoch_ms}-{writer}-{seq}.json   one object per event
 * {prefix}/{session_id}/artifacts/{ref}.{id}.json               an original a placeholder names (recall)
 * ```
 *
 * S3 cannot append, so `events.jsonl` becomes an `events/` folder with one object per event;
 * the keys sort in write order (13-digit epoch milliseconds, a random writer id per adapter,
 * a 6-digit sequence), and listing `events/` then concatenating gives the same JSON Lines.
 * As in the fs layout, every write has a key nobody wrote before (`{id}`: a time-ordered
 * write id), nothing is copied aside or replaced; reads of an artifact return its newest write.
 * A write's `signal` (aborted when the manager gives the write up) aborts its request. `@aws-sdk/client-s3` is an optional peer, imported on first use. Use S3 lifecycle rules
 * for retention.
 *
 * @example
 * ```ts
 * import { s3Storage } from 'agent-compaction/storage/s3';
 * const storage = s3Storage({ bucket: 'agent-archive', prefix: 'compaction', kmsKeyId: 'alias/agent-archive' });
 * ```
 */
export function s3Storage(options: S3StorageOptions): StorageAdapter {
  assertBucket(options);
  const prefix = (options.prefix ?? '').replace(/^\/+|\/+$/g, '');
  const writer = Math.random().toString(36).slice(2, 8).padEnd(6, '0');
  let sequence = 0;
  const parts = transcriptParts();
  const objects = s3Objects(options);
  const put = objects.put.bind(objects);
  const get = objects.get.bind(objects);
  const listKeys = objects.listKeys.bind(objects);

  const keyFor = sessionKeys(prefix, options);

  /** The newest key name of each reference in the session's `artifacts/` folder. */
  const artifactFiles = async (sessionId: string, ref?: string): Promise<Map<string, string>> => {
    const folder = keyFor(sessionId, ARTIFACT_DIR);
    const keys = await listKeys(ref === undefined ? folder : `${folder}/${ref}.`, ref !== undefined);
    return newestArtifactFiles(namesIn(keys, folder));
  };

  const readArtifact = async (
    sessionId: string,
    ref: string,
    name: string,
    unreadable?: 'throw',
  ): Promise<ArchivedArtifact | undefined> => {
    const text = await get(keyFor(sessionId, `${ARTIFACT_DIR}/${name}`));
    return text === undefined ? undefined : parseStoredArtifact(text, sessionId, ref, unreadable);
  };

  return {
    name: 's3',
    async saveTranscript(sessionId, transcript, step, options) {
      const planned = parts.plan(keyFor(sessionId, ''), transcript, step);
      const key = keyFor(sessionId, planned.name);
      const location = await put(key, planned.body, 'application/x-ndjson', options?.signal);
      planned.commit();
      return location;
    },
    async saveSummary(sessionId, summary: ArchivedSummary, step, options) {
      const key = keyFor(sessionId, ARCHIVE_NAMES.summary(step, archiveWriteId()));
      return put(key, `${JSON.stringify(summary, null, 2)}\n`, 'application/json', options?.signal);
    },
    async latestSummaryStep(sessionId) {
      // Only the summaries are listed (`summary-` names), not the session's events.
      const folder = keyFor(sessionId, '');
      return highestSummaryStep(namesIn(await listKeys(`${folder}/summary-`, true), folder));
    },
    async saveEvent(sessionId, event: AnyCompactEvent, options) {
      sequence += 1;
      await put(
        keyFor(sessionId, eventName(writer, sequence)),
        `${JSON.stringify(event)}\n`,
        'application/json',
        options?.signal,
      );
    },
    async saveArtifact(sessionId, artifact: ArchivedArtifact, options) {
      assertArtifact(sessionId, artifact);
      const name = artifactFileName(artifact.ref, archiveWriteId());
      return put(
        keyFor(sessionId, `${ARTIFACT_DIR}/${name}`),
        `${JSON.stringify(artifact)}\n`,
        'application/json',
        options?.signal,
      );
    },
    async loadArtifact(sessionId, ref) {
      assertArtifactRef(ref);
      const name = (await artifactFiles(sessionId, ref)).get(ref);
      return name === undefined ? undefined : readArtifact(sessionId, ref, name, 'throw');
    },
    async listArtifacts(sessionId) {
      const read = (ref: string, name: string) => readArtifact(sessionId, ref, name);
      return readArtifacts(await artifactFiles(sessionId), read, READ_CONCURRENCY);
    },
    async close() {
      await objects.drain();
    },
  };
}

/** The options name a bucket, a non-empty string; a prefix is a string, a time limit a whole number (`invalid_config` otherwise). */
function assertBucket(options: S3StorageOptions): void {
  if (!options || typeof options.bucket !== 'string' || options.bucket === '') {
    throw new CompactError('invalid_config', 's3Storage: bucket must be a non-empty string', {
      issues: [{ path: ['storage', 'bucket'], message: 'must be a non-empty string' }],
    });
  }
  if (options.prefix !== undefined && typeof options.prefix !== 'string') {
    throw new CompactError('invalid_config', 's3Storage: prefix must be a string', {
      issues: [{ path: ['storage', 'prefix'], message: 'must be a string' }],
    });
  }
  const timeout = options.requestTimeoutMs;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1)) {
    throw new CompactError(
      'invalid_config',
      's3Storage: requestTimeoutMs must be a whole number of milliseconds >= 1',
      {
        issues: [
          { path: ['storage', 'requestTimeoutMs'], message: 'must be a whole number of milliseconds >= 1' },
        ],
      },
    );
  }
}

/** The bucket's objects, each request under the options' time limit. */
function s3Objects(options: S3StorageOptions): S3Objects {
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_S3_REQUEST_TIMEOUT_MS;
  return new S3Objects({ ...options, requestTimeoutMs });
}

/** The names of the keys right in `folder` (not in a folder below it). */
function namesIn(keys: readonly string[], folder: string): string[] {
  return keys
    .filter((key) => key.lastIndexOf('/') === folder.length)
    .map((key) => key.slice(folder.length + 1));
}

/** An event's object name, in write order: 13-digit epoch milliseconds, the writer, a 6-digit sequence. */
function eventName(writer: string, sequence: number): string {
  const time = String(Math.max(0, Math.floor(Date.now()))).padStart(13, '0');
  return `events/${time}-${writer}-${String(sequence).padStart(6, '0')}.json`;
}

/** The key of `name` in a session's folder under `prefix` (`{prefix}/{session_id}/{name}`). */
function sessionKeys(prefix: string, options: SessionFolderOptions) {
  return (sessionId: string, name: string): string => {
    if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
    return [prefix, sessionFolderName(sessionId, options), name].filter((part) => part !== '').join('/');
  };
}
