/**
 * Argument checks shared by the session stores, so every backend rejects the same bad input
 * with the same typed error.
 */
import { CompactError } from '../errors.js';
import { isPackedField, packedProblem } from './packed-state.js';
import type { SessionState, SessionStoreSetOptions } from './session-state.js';

function invalid(path: (string | number)[], problem: string): CompactError {
  return new CompactError('invalid_config', `${path.join('.')} ${problem}`, {
    issues: [{ path, message: problem }],
  });
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** Throws unless `sessionId` is a string. */
export function checkSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== 'string') throw invalid(['sessionId'], 'must be a string');
}

/** Throws unless `state` has a whole non-negative `version` and an array of `coveredIds`. */
export function checkState(state: unknown): asserts state is SessionState {
  if (typeof state !== 'object' || state === null) throw invalid(['state'], 'must be an object');
  const { version, coveredIds } = state as Partial<SessionState>;
  if (!isCount(version)) throw invalid(['state', 'version'], 'must be a whole number >= 0');
  if (!Array.isArray(coveredIds)) throw invalid(['state', 'coveredIds'], 'must be an array of message ids');
}

/** Throws unless the options of `set` are whole numbers (`fencingToken` >= 1). */
export function checkWriteOptions(options: SessionStoreSetOptions): void {
  if (options.expectedVersion !== undefined && !isCount(options.expectedVersion))
    throw invalid(['options', 'expectedVersion'], 'must be a whole number >= 0');
  if (options.fencingToken !== undefined && !(isCount(options.fencingToken) && options.fencingToken >= 1))
    throw invalid(['options', 'fencingToken'], 'must be a whole number >= 1');
}

/** Throws unless `ttlMs` is a whole number of milliseconds from 1 to 24 hours. */
export function checkTtl(ttlMs: unknown): asserts ttlMs is number {
  if (!isCount(ttlMs) || ttlMs < 1 || ttlMs > 86_400_000)
    throw invalid(['ttlMs'], 'must be a whole number of milliseconds from 1 to 86400000');
}

const REWRITE_KINDS = new Set(['cleared', 'shortened', 'cut']);
const isStringArray = (value: unknown): boolean =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * What is wrong with a state read back from a store (`undefined` when it matches the
 * schema): a value that does not parse or has the wrong shape is treated as lost.
 */
export function storedStateProblem(state: unknown): string | undefined {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) return 'is not an object';
  const s = state as Record<string, unknown>;
  if (!isCount(s.version)) return 'version is not a whole number >= 0';
  // A packed list (packed-state.ts) is checked in its packed form: its field is read on first use.
  const packed = packedOfState(s);
  if (packed !== undefined) return packed;
  if (!isPackedField(s, 'coveredIds') && !isStringArray(s.coveredIds))
    return 'coveredIds is not an array of message ids';
  for (const field of ['pinnedIds', 'keptIds'] as const)
    if (!isPackedField(s, field) && s[field] !== undefined && !isStringArray(s[field]))
      return `${field} is not an array of message ids`;
  const pace = s.pace as Record<string, unknown> | undefined;
  if (pace !== undefined && (typeof pace !== 'object' || pace === null || !isCount(pace.trough)))
    return 'pace.trough is not a whole number';
  const summary = s.summary as Record<string, unknown> | undefined;
  if (summary !== undefined) {
    if (typeof summary !== 'object' || summary === null) return 'summary is not an object';
    if (typeof summary.text !== 'string') return 'summary.text is not a string';
    if (typeof summary.tokens !== 'number' || !Number.isFinite(summary.tokens))
      return 'summary.tokens is not a number';
  }
  const rewrites = isPackedField(s, 'rewrites')
    ? undefined
    : (s.rewrites as Record<string, unknown> | undefined);
  if (rewrites !== undefined) {
    if (typeof rewrites !== 'object' || rewrites === null || Array.isArray(rewrites))
      return 'rewrites is not an object';
    for (const [id, rewrite] of Object.entries(rewrites)) {
      const r = rewrite as Record<string, unknown> | null;
      if (
        typeof r !== 'object' ||
        r === null ||
        !REWRITE_KINDS.has(r.kind as string) ||
        typeof r.ref !== 'string'
      )
        return `rewrites[${JSON.stringify(id)}] is not a rewrite`;
      if (r.keepChars !== undefined && !isCount(r.keepChars))
        return `rewrites[${JSON.stringify(id)}].keepChars is not a count`;
      if (r.unarchived !== undefined && typeof r.unarchived !== 'boolean')
        return `rewrites[${JSON.stringify(id)}].unarchived is not a boolean`;
    }
  }
  return undefined;
}

/**
 * What is wrong with the packed lists of a state or of its branches, as stored (a `packed`
 * field) or as read (an unpacked state: its packed form was checked by the read).
 */
function packedOfState(s: Record<string, unknown>): string | undefined {
  if (s.packed !== undefined) {
    const problem = packedProblem(s.packed);
    if (problem !== undefined) return problem;
  }
  if (!Array.isArray(s.branches)) return undefined;
  for (const [i, branch] of s.branches.entries()) {
    const packed = (branch as { packed?: unknown } | null)?.packed;
    const problem = packed === undefined ? undefined : packedProblem(packed);
    if (problem !== undefined) return `branches[${i}].${problem}`;
  }
  return undefined;
}
