/**
 * The session ids a caller may give. The store holds a session's own records beside its state,
 * under keys made from its id: `<id>::prepared`, `<id>::prepared-forks`, `<id>::counts`,
 * `<id>::quick`, `<id>::agent::<name>` and the locks `<id>::prepared@<fold>`. An id that is one of those keys would read and write another
 * session's record as its own state (a client naming its session `victim::prepared` took the
 * victim's preparation claim and overwrote its prepared summary), so such ids are refused.
 */
import { CompactError } from '../errors.js';

/** Suffixes of the keys the manager derives from a session id. */
const RECORD_SUFFIXES = ['::prepared', '::prepared-forks', '::counts', '::quick'] as const;

/** Throws `invalid_messages` naming `sessionId` unless it is a non-empty string no record's key can equal. */
export function checkCallSessionId(sessionId: unknown): asserts sessionId is string {
  let problem: string | undefined;
  if (typeof sessionId !== 'string' || sessionId === '') problem = 'must be a non-empty string';
  else if (
    RECORD_SUFFIXES.some((suffix) => sessionId.endsWith(suffix)) ||
    sessionId.includes('::agent::') ||
    sessionId.includes('::prepared@')
  )
    problem = `must not end with ${RECORD_SUFFIXES.join(', ')} nor hold '::agent::' or '::prepared@' (the keys of a session's own records)`;
  if (problem === undefined) return;
  throw new CompactError('invalid_messages', `sessionId ${problem}`, {
    issues: [{ path: ['sessionId'], message: problem }],
  });
}
