/**
 * Ariadne's ingest rules for one event, as its documented contract states them: trace and
 * span events with their typed fields, ISO-8601 UTC timestamps ending in `Z`,
 * `ended_at >= started_at`, `status` ok or error, unknown keys dropped, strings in `data`
 * over 100 KB truncated.
 */

/** Ariadne's request body limit. */
export const ARIADNE_MAX_BODY_BYTES = 262_144;
const MAX_DATA_STRING = 100 * 1024;
const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** One validation problem, as Ariadne reports it. */
export interface AriadneIssue {
  path: string;
  message: string;
}

/** An event as the receiver stores it (unknown keys dropped). */
export type StoredAriadneEvent = Record<string, unknown> & { type: 'trace' | 'span'; trace_id: string };

const TRACE_KEYS: Record<string, 'string' | 'time' | 'metadata'> = {
  trace_id: 'string',
  name: 'string',
  group_id: 'string',
  started_at: 'time',
  ended_at: 'time',
  metadata: 'metadata',
};
const SPAN_KEYS: Record<string, 'string' | 'time' | 'data' | 'status'> = {
  trace_id: 'string',
  span_id: 'string',
  parent_id: 'string',
  kind: 'string',
  name: 'string',
  started_at: 'time',
  ended_at: 'time',
  data: 'data',
  status: 'status',
};

/** Validates one event; returns the stored form or the problems found. */
export function validateAriadneEvent(
  value: unknown,
  path: string,
): { event?: StoredAriadneEvent; issues: AriadneIssue[] } {
  const issues: AriadneIssue[] = [];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { issues: [{ path, message: 'expected an object' }] };
  }
  const input = value as Record<string, unknown>;
  const type = input.type;
  if (type !== 'trace' && type !== 'span') {
    return { issues: [{ path: `${path}.type`, message: "expected 'trace' or 'span'" }] };
  }
  const keys: Record<string, string> = type === 'trace' ? TRACE_KEYS : SPAN_KEYS;
  const out: Record<string, unknown> = { type };
  const required = type === 'trace' ? ['trace_id'] : ['trace_id', 'span_id'];
  for (const key of required) {
    if (typeof input[key] !== 'string' || input[key] === '') {
      issues.push({ path: `${path}.${key}`, message: 'required non-empty string' });
    }
  }
  for (const [key, kind] of Object.entries(keys)) {
    const item = input[key];
    if (item === undefined || item === null) continue;
    const at = `${path}.${key}`;
    switch (kind) {
      case 'string':
        if (typeof item !== 'string') issues.push({ path: at, message: 'expected a string' });
        else out[key] = item;
        break;
      case 'time':
        if (typeof item !== 'string' || !ISO_Z.test(item) || Number.isNaN(Date.parse(item))) {
          issues.push({ path: at, message: 'expected an ISO-8601 UTC timestamp ending in Z' });
        } else out[key] = item;
        break;
      case 'metadata':
        if (typeof item !== 'object' || Array.isArray(item)) {
          issues.push({ path: at, message: 'expected an object' });
        } else {
          for (const [metaKey, metaValue] of Object.entries(item as Record<string, unknown>)) {
            if (typeof metaValue !== 'string')
              issues.push({ path: `${at}.${metaKey}`, message: 'expected a string' });
          }
          out[key] = item;
        }
        break;
      case 'data':
        if (typeof item !== 'object' || Array.isArray(item))
          issues.push({ path: at, message: 'expected an object' });
        else out[key] = truncateStrings(item);
        break;
      case 'status':
        if (item !== 'ok' && item !== 'error') issues.push({ path: at, message: "expected 'ok' or 'error'" });
        else out[key] = item;
        break;
    }
  }
  if (typeof out.started_at === 'string' && typeof out.ended_at === 'string') {
    if (Date.parse(out.ended_at) < Date.parse(out.started_at)) {
      issues.push({ path: `${path}.ended_at`, message: 'ended_at must be >= started_at' });
    }
  }
  return issues.length > 0 ? { issues } : { event: out as StoredAriadneEvent, issues };
}

function truncateStrings(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length > MAX_DATA_STRING ? value.slice(0, MAX_DATA_STRING) : value;
  if (Array.isArray(value)) return value.map(truncateStrings);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, truncateStrings(item)]));
  }
  return value;
}
