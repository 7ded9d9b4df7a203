/** A message's JSON as the index hashes it, with bad input (cycles, runaway nesting) as typed errors. */
import { invalidMessage } from '../errors.js';

/** The message's JSON without its top-level `meta` (a replacer function would be much slower). */
function canonicalJson(raw: object): string {
  if (!('meta' in raw)) return JSON.stringify(raw);
  const { meta: _meta, ...rest } = raw as Record<string, unknown>;
  return JSON.stringify(rest);
}

/** Runs `work` on message `index`, turning a stack overflow (absurdly deep nesting) into a typed error. */
export function guardDepth<T>(work: () => T, index: number): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof RangeError)
      throw invalidMessage(index, '', 'is nested too deeply to process (check for runaway nesting)');
    throw error;
  }
}

/** {@link canonicalJson}, with circular, BigInt and too-deep messages as typed errors naming the index. */
export function safeJson(raw: object, index: number): string {
  try {
    return guardDepth(() => canonicalJson(raw), index);
  } catch (error) {
    if (error instanceof TypeError && /circular/i.test(error.message))
      throw invalidMessage(index, '', 'contains a circular reference (messages must be JSON data)');
    if (error instanceof TypeError && /BigInt/.test(error.message))
      throw invalidMessage(index, '', 'contains a BigInt (messages must be JSON data)');
    throw error;
  }
}
