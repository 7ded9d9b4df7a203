/**
 * The Lua scripts behind the Redis session store. One hash per session holds every field, so
 * each script touches one key (atomic on one server, and one slot in a cluster):
 *
 * | field       | meaning                                                      |
 * |-------------|--------------------------------------------------------------|
 * | `state`     | the `SessionState` as JSON                                   |
 * | `version`   | its `version`, for the compare-and-set                       |
 * | `fence`     | the last fencing token issued (kept by `delete`)             |
 * | `lock`      | the current holder's token                                   |
 * | `lockUntil` | when that lock lapses, in the server's epoch milliseconds    |
 * | `rev`       | counts the writes and deletes of `state` (kept by `delete`)  |
 * | `wid`       | the random id of the write of `state`                        |
 *
 * Lock times come from the server's clock (`TIME`), never a client's.
 */
import { createHash } from 'node:crypto';

/** A script and its SHA-1 (for `EVALSHA`). */
export interface RedisScript {
  readonly source: string;
  readonly sha1: string;
}

function script(source: string): RedisScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** KEYS[1]; returns the state JSON or nil. */
export const GET_SCRIPT = script(`return redis.call('HGET', KEYS[1], 'state')`);

/**
 * The state's revision: the write counter, the write's id (random, given by the writer: a
 * server restarted without its data, or from an older snapshot, counts its writes from zero
 * again, so a count alone repeats), the version and the state's length (a writer of an older
 * release, which counts nothing, still moves the version or the length when it compacts).
 * Lua: `rev` is the revision of KEYS[1].
 */
const REVISION = `local rev = (redis.call('HGET', KEYS[1], 'rev') or '0') .. ':' .. (redis.call('HGET', KEYS[1], 'wid') or '') .. ':' .. (redis.call('HGET', KEYS[1], 'version') or '') .. ':' .. redis.call('HSTRLEN', KEYS[1], 'state')`;

/**
 * KEYS[1]; ARGV: a revision or ''. Returns {revision, 0} when the state's revision is
 * ARGV[1], {revision, 1} when there is no state, else {revision, 2, state JSON}.
 */
export const GET_IF_CHANGED_SCRIPT = script(`${REVISION}
if ARGV[1] ~= '' and rev == ARGV[1] then
  return {rev, 0}
end
local state = redis.call('HGET', KEYS[1], 'state')
if not state then
  return {rev, 1}
end
return {rev, 2, state}`);

/**
 * KEYS[1]; ARGV: state JSON, version, expectedVersion or '', fencingToken or '', write id.
 * Returns 1 (written), 0 (version mismatch) or -1 (fenced: a newer lock was issued).
 */
export const SET_SCRIPT =
  script(`if ARGV[3] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'version') or '0') ~= tonumber(ARGV[3]) then
  return 0
end
if ARGV[4] ~= '' and tonumber(ARGV[4]) < tonumber(redis.call('HGET', KEYS[1], 'fence') or '0') then
  return -1
end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'version', ARGV[2], 'wid', ARGV[5])
redis.call('HINCRBY', KEYS[1], 'rev', 1)
return 1`);

/** KEYS[1]; removes the state, keeps the fencing counter and a held lock. */
export const DELETE_SCRIPT = script(`if redis.call('HDEL', KEYS[1], 'state', 'version', 'wid') > 0 then
  redis.call('HINCRBY', KEYS[1], 'rev', 1)
end
return 1`);

/** KEYS[1]; ARGV: ttlMs. Returns the new fencing token, or 0 when another lock is live. */
export const ACQUIRE_SCRIPT = script(`${NOW}
if redis.call('HGET', KEYS[1], 'lock') and tonumber(redis.call('HGET', KEYS[1], 'lockUntil')) > now then
  return 0
end
local token = redis.call('HINCRBY', KEYS[1], 'fence', 1)
redis.call('HSET', KEYS[1], 'lock', token, 'lockUntil', string.format('%d', now + tonumber(ARGV[1])))
return token`);

/** KEYS[1]; ARGV: token, ttlMs. Returns 1 when renewed, 0 when the lock is no longer this token's. */
export const RENEW_SCRIPT = script(`if redis.call('HGET', KEYS[1], 'lock') ~= ARGV[1] then
  return 0
end
${NOW}
redis.call('HSET', KEYS[1], 'lockUntil', string.format('%d', now + tonumber(ARGV[2])))
return 1`);

/** KEYS[1]; ARGV: token. Returns 1 when released, 0 when the lock was no longer this token's. */
export const RELEASE_SCRIPT = script(`if redis.call('HGET', KEYS[1], 'lock') ~= ARGV[1] then
  return 0
end
redis.call('HDEL', KEYS[1], 'lock', 'lockUntil')
return 1`);

/**
 * KEYS[1]; ARGV: the state value found corrupt. Moves it to the `corrupt` field (kept for
 * inspection) and forgets the state, when it is still that value. Returns 1 when moved.
 */
export const SET_ASIDE_SCRIPT = script(`if redis.call('HGET', KEYS[1], 'state') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'corrupt', ARGV[1])
redis.call('HDEL', KEYS[1], 'state', 'version', 'wid')
redis.call('HINCRBY', KEYS[1], 'rev', 1)
return 1`);
