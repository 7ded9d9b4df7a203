import type { AnyCompactEvent } from '../core/events.js';
import { type Redactor, redactDeep } from '../core/redactor.js';

/** The `operationId` of an event (one per preflight/compact call), when it carries one. */
export function operationIdOf(event: AnyCompactEvent): string | undefined {
  const value = (event as { operationId?: unknown }).operationId;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `tEst` -> `t_est`, `usagePct` -> `usage_pct` (the spec's property names). */
export function snakeCase(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** A JSON-safe copy with snake_case keys; bigints become strings, cycles and functions are dropped. */
export function toWireValue(value: unknown, seen: WeakSet<object> = new WeakSet()): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'bigint':
      return value.toString();
    case 'object': {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
      try {
        if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
        if (value instanceof Error) return { name: value.name, message: value.message };
        if (Array.isArray(value)) return value.map((item) => toWireValue(item, seen) ?? null);
        const out: Record<string, unknown> = {};
        for (const [key, item] of Object.entries(value)) {
          const wire = toWireValue(item, seen);
          if (wire !== undefined) out[snakeCase(key)] = wire;
        }
        return out;
      } finally {
        seen.delete(value);
      }
    }
    default:
      return undefined;
  }
}

/** Applies an optional exporter-level redactor to an event (a copy), never throwing. */
export function redactEvent(event: AnyCompactEvent, redact: Redactor | undefined): AnyCompactEvent {
  if (!redact) return event;
  return redactDeep(event, redact);
}

/** Epoch milliseconds to ISO-8601 UTC with `Z`, tolerating bad input (falls back to now). */
export function isoTime(epochMs: unknown): string {
  const value = typeof epochMs === 'number' && Number.isFinite(epochMs) ? epochMs : Date.now();
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? new Date().toISOString() : date.toISOString();
}

/** The summary text of a `compact.summary_created` event, if any. */
export function summaryTextOf(event: AnyCompactEvent): string | undefined {
  if (event.name !== 'compact.summary_created') return undefined;
  const summary = (event.properties as { summary?: unknown } | undefined)?.summary;
  return typeof summary === 'string' ? summary : undefined;
}
