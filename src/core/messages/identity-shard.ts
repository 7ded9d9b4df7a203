/**
 * What the message index's identity cache reads of a message object: its fingerprint (the
 * field an edit in place replaces) and the shard of the cache it is kept in.
 */
import { ShardedWeakMap } from '../sharded-map.js';

/** The field whose replacement tells an edit in place: content, output, arguments or summary. */
export function fingerprintOf(raw: Record<string, unknown>): unknown {
  return raw.content ?? raw.output ?? raw.arguments ?? raw.summary;
}

/**
 * The identity cache's shard of a message: read from its fingerprint's text (a string, or
 * the last block's `text`), else its id. Stable while the fingerprint is the same string; a
 * block edited in place may move it (a miss, so a fresh parse, where one table never saw it).
 */
export function identityShard(raw: Record<string, unknown>): number {
  const fingerprint = fingerprintOf(raw);
  if (typeof fingerprint === 'string') return ShardedWeakMap.shardOf(fingerprint);
  if (Array.isArray(fingerprint)) {
    const last: unknown = fingerprint[fingerprint.length - 1];
    const text =
      last !== null && typeof last === 'object' ? (last as Record<string, unknown>).text : undefined;
    return ShardedWeakMap.shardOf(typeof text === 'string' ? text : `${fingerprint.length}`);
  }
  const id = raw.id ?? raw.call_id ?? raw.tool_call_id;
  return ShardedWeakMap.shardOf(typeof id === 'string' ? id : undefined);
}
