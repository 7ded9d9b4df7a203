/**
 * Structural equality of two wire messages (JSON-like values), for the warm path when an
 * SDK rebuilds every message object per call: comparing with the object indexed last time
 * is far cheaper than hashing the content again. Strings compare by value (a memcmp in
 * V8); the walk stops at the first difference and allocates nothing.
 */

/** True when `a` and `b` hold the same JSON-like value. */
export function sameWire(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameWire(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const protoA = Object.getPrototypeOf(a);
  if (protoA !== Object.getPrototypeOf(b) || (protoA !== Object.prototype && protoA !== null)) return false;
  const recordA = a as Record<string, unknown>;
  const recordB = b as Record<string, unknown>;
  let keys = 0;
  for (const key in recordA) {
    if (!Object.hasOwn(recordA, key)) continue;
    if (!Object.hasOwn(recordB, key) || !sameWire(recordA[key], recordB[key])) return false;
    keys++;
  }
  for (const key in recordB) if (Object.hasOwn(recordB, key) && --keys < 0) return false;
  return keys === 0;
}

/**
 * The value watched to notice a message edited in place (its content field: a new string or
 * array means an edit), the same field the message index watches.
 */
export function wireFingerprint(raw: unknown): unknown {
  const record = raw as Record<string, unknown>;
  return record.content ?? record.output ?? record.arguments ?? record.summary;
}

/** True when `raw` still holds the fingerprint and `meta` recorded for it (no in-place edit seen). */
export function unchangedInPlace(raw: unknown, fingerprint: unknown, meta: unknown): boolean {
  return wireFingerprint(raw) === fingerprint && (raw as Record<string, unknown>).meta === meta;
}

/**
 * A cheap look at a rebuilt message object: the same role and type, and a content field of the
 * same kind and length as `previous` (the object verified last). It notices a message moved,
 * dropped, inserted or rewritten at another length; an edit of the same length is left to
 * {@link sameWire}.
 */
export function sameShape(raw: unknown, previous: unknown): boolean {
  if (raw === null || typeof raw !== 'object') return false;
  const a = raw as Record<string, unknown>;
  const b = previous as Record<string, unknown>;
  if (a.role !== b.role || a.type !== b.type) return false;
  const contentA = wireFingerprint(a);
  const contentB = wireFingerprint(b);
  if (typeof contentA === 'string' || Array.isArray(contentA))
    return typeof contentA === typeof contentB && contentA.length === (contentB as string | unknown[]).length;
  return typeof contentA === typeof contentB;
}
