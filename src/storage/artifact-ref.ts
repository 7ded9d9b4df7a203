/**
 * Archive references (`tool-3kf93jd02kd9`, `args-…`, `cut-…`, `sum-v3`) as every storage
 * adapter stores and checks them: one shape, one file or key name per reference, one order.
 */

import type { ArchivedArtifact } from '../core/archive/storage-adapter.js';
import { CompactError } from '../core/errors.js';

/** The shape of an archive reference: a lower-case word, a dash, lower-case letters and digits. */
export const ARTIFACT_REF_PATTERN = /^[a-z]{1,16}-[0-9a-z]{1,48}$/;

/** Longest reference accepted (the pattern's bound). */
export const MAX_ARTIFACT_REF_LENGTH = 65;

/** The kinds an archived artifact may have. */
export const ARTIFACT_KINDS: readonly ArchivedArtifact['kind'][] = Object.freeze([
  'tool_result',
  'tool_arguments',
  'message',
  'summarized',
]);

/** True when `ref` has the shape of an archive reference (so it is also a safe file or key name). */
export function isArtifactRef(ref: unknown): ref is string {
  return typeof ref === 'string' && ref.length <= MAX_ARTIFACT_REF_LENGTH && ARTIFACT_REF_PATTERN.test(ref);
}

/** Throws `storage_failed` naming `field` unless `ref` is an archive reference. */
export function assertArtifactRef(ref: unknown, field = 'ref'): asserts ref is string {
  if (!isArtifactRef(ref)) {
    const shown = typeof ref === 'string' ? JSON.stringify(ref.slice(0, 80)) : typeof ref;
    throw new CompactError(
      'storage_failed',
      `${field} must be an archive reference like "tool-3kf93jd02kd9" (${ARTIFACT_REF_PATTERN.source}), got ${shown}`,
    );
  }
}

/** Checks an artifact handed to `saveArtifact` for `sessionId`; throws `storage_failed` naming the field. */
export function assertArtifact(sessionId: unknown, artifact: ArchivedArtifact): void {
  if (typeof sessionId !== 'string') throw new CompactError('storage_failed', 'sessionId must be a string');
  if (!artifact || typeof artifact !== 'object')
    throw new CompactError('storage_failed', 'artifact must be an object');
  assertArtifactRef(artifact.ref, 'artifact.ref');
  if (artifact.sessionId !== sessionId) {
    throw new CompactError('storage_failed', 'artifact.sessionId must equal the sessionId it is saved under');
  }
  if (typeof artifact.text !== 'string')
    throw new CompactError('storage_failed', 'artifact.text must be a string');
  if (!ARTIFACT_KINDS.includes(artifact.kind)) {
    throw new CompactError('storage_failed', `artifact.kind must be one of ${ARTIFACT_KINDS.join(', ')}`);
  }
}

/**
 * The file (or key) name of an artifact inside its session's `artifacts/` folder: `{ref}.{id}.json`
 * with the write id of `archiveWriteId`, so saving a reference again writes a new file and the
 * earlier one stays; without an id, the name of the layout before write ids (`{ref}.json`).
 */
export function artifactFileName(ref: string, id?: string): string {
  assertArtifactRef(ref);
  return id === undefined ? `${ref}.json` : `${ref}.${id}.json`;
}

const WRITE_ID = /^[0-9a-z]{9,}-[0-9a-f]{8}$/;

/** The reference and write id a file name of {@link artifactFileName} holds, or `undefined` for any other name. */
export function parseArtifactFile(name: string): { ref: string; id?: string } | undefined {
  if (!name.endsWith('.json')) return undefined;
  const stem = name.slice(0, -'.json'.length);
  const dot = stem.indexOf('.');
  if (dot < 0) return isArtifactRef(stem) ? { ref: stem } : undefined;
  const ref = stem.slice(0, dot);
  const id = stem.slice(dot + 1);
  return isArtifactRef(ref) && WRITE_ID.test(id) ? { ref, id } : undefined;
}

/** The reference a file name of {@link artifactFileName} holds, or `undefined` for any other name. */
export function refOfArtifactFile(name: string): string | undefined {
  return parseArtifactFile(name)?.ref;
}

/**
 * The newest file of each reference among `names` (an artifacts folder's listing): the one with
 * the latest write id; a name without one (the layout before write ids) is the oldest.
 */
export function newestArtifactFiles(names: Iterable<string>): Map<string, string> {
  const newest = new Map<string, { name: string; id: string }>();
  for (const name of names) {
    const parsed = parseArtifactFile(name);
    if (!parsed) continue;
    const id = parsed.id ?? '';
    const current = newest.get(parsed.ref);
    if (!current || id > current.id) newest.set(parsed.ref, { name, id });
  }
  return new Map([...newest].map(([ref, { name }]) => [ref, name]));
}

/**
 * Parses a stored artifact and checks it belongs to `sessionId` under `ref`; `undefined`
 * when it does not (a file copied or forged into the wrong session is never returned).
 * A text that is no artifact at all (truncated, corrupt) is `undefined` too, or with
 * `unreadable: 'throw'` (one artifact read by its ref) a `corrupt_state` error naming the ref.
 */
export function parseStoredArtifact(
  text: string,
  sessionId: string,
  ref: string,
  unreadable: 'skip' | 'throw' = 'skip',
): ArchivedArtifact | undefined {
  const corrupt = (cause?: unknown) => {
    if (unreadable === 'skip') return undefined;
    throw new CompactError(
      'corrupt_state',
      `the archived artifact "${ref}" is unreadable (corrupt or truncated)`,
      {
        cause,
      },
    );
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return corrupt(error);
  }
  const artifact = value as ArchivedArtifact;
  if (!artifact || typeof artifact !== 'object' || Array.isArray(artifact)) return corrupt();
  if (artifact.sessionId !== sessionId || artifact.ref !== ref || typeof artifact.text !== 'string')
    return undefined;
  return artifact;
}

/** Sorts artifacts oldest first: by time, then compaction step, then message position, then reference. */
export function sortArtifacts(artifacts: ArchivedArtifact[]): ArchivedArtifact[] {
  return artifacts.sort(
    (a, b) =>
      a.createdAt - b.createdAt ||
      (a.step ?? 0) - (b.step ?? 0) ||
      (a.messageIndex ?? Number.MAX_SAFE_INTEGER) - (b.messageIndex ?? Number.MAX_SAFE_INTEGER) ||
      (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0),
  );
}

/**
 * Reads the artifacts of `files` (reference → file name), `concurrency` at a time, and returns
 * those that exist, oldest first.
 */
export async function readArtifacts(
  files: ReadonlyMap<string, string>,
  read: (ref: string, name: string) => Promise<ArchivedArtifact | undefined>,
  concurrency: number,
): Promise<ArchivedArtifact[]> {
  const entries = [...files];
  const artifacts: ArchivedArtifact[] = [];
  for (let i = 0; i < entries.length; i += concurrency) {
    const batch = await Promise.all(entries.slice(i, i + concurrency).map(([ref, name]) => read(ref, name)));
    for (const artifact of batch) if (artifact) artifacts.push(artifact);
  }
  return sortArtifacts(artifacts);
}
