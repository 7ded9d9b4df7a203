/**
 * The checks every integration factory makes before it returns (review 88): a misspelt option
 * was ignored without a word, a session id of the wrong type or a missing manager failed only at
 * the first model call (the latter with a bare TypeError). `new CompactManager` already names an
 * unknown option; the factories now do the same.
 */
import { CompactError, closestOption } from '../core/errors.js';

function refused(factory: string, path: string, problem: string): CompactError {
  return new CompactError('invalid_config', `${factory}: ${path} ${problem}`, {
    issues: [{ path: [path], message: problem }],
  });
}

const typeName = (value: unknown): string =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;

/**
 * Throws `invalid_config` naming the option when `manager` is not a manager, `options` is not an
 * object, one of its keys is not in `known` (with the closest known one), `sessionId` is neither
 * a non-empty string nor a function, or `onCompaction` is not a function.
 */
export function checkAdapterOptions(
  factory: string,
  manager: unknown,
  options: unknown,
  known: readonly string[],
): void {
  const m = manager as { preflight?: unknown; compact?: unknown } | null | undefined;
  if (typeof m?.preflight !== 'function' || typeof m.compact !== 'function')
    throw refused(factory, 'manager', 'must be a CompactManager');
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw refused(factory, 'options', `must be an object (got ${typeName(options)})`);
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (known.includes(key)) continue;
    const close = closestOption(key, known);
    throw refused(factory, key, `is not an option${close ? ` (did you mean ${close}?)` : ''}`);
  }
  const { sessionId, onCompaction } = given;
  if (
    sessionId !== undefined &&
    typeof sessionId !== 'function' &&
    (typeof sessionId !== 'string' || sessionId === '')
  )
    throw refused(
      factory,
      'sessionId',
      `must be a non-empty string or a function (got ${typeName(sessionId)})`,
    );
  if (onCompaction !== undefined && typeof onCompaction !== 'function')
    throw refused(factory, 'onCompaction', `must be a function (got ${typeName(onCompaction)})`);
}
