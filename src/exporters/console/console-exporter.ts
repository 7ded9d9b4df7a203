import { jsonTerminalText, terminalText } from '../../cli/terminal-text.js';
import type { AnyCompactEvent, EventExporter } from '../../core/events/events.js';
import {
  type ExportPrivacyOptions,
  isoTime,
  operationIdOf,
  prepareEvent,
  summaryTextOf,
  toWireValue,
} from '../event-utils.js';
import { CompactionLines } from './compaction-lines.js';

/** A stream the console exporter can write to. */
export interface WritableLike {
  write(chunk: string): unknown;
}

/** Options of {@link consoleExporter}. */
export interface ConsoleExporterOptions extends ExportPrivacyOptions {
  /**
   * `summary`: one readable line per compaction (what triggered it, tokens before and after,
   * what each level freed, the summary version and summarizer), per error and per warning,
   * nothing for calls that do not compact; `pretty` (verbose): one readable line per event;
   * `json`: one JSON object per line (JSON Lines, snake_case properties, ISO times).
   * @default 'summary'
   */
  format?: 'summary' | 'pretty' | 'json';
  /**
   * Where lines go. Stderr keeps stdout free for the agent's own output.
   * @default process.stderr
   */
  stream?: WritableLike;
}

/** The console exporter's defaults. */
export const DEFAULT_CONSOLE_OPTIONS = Object.freeze({ format: 'summary' as const });

function short(value: unknown, max = 80): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const flat = (text ?? '').replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Formats one event as a readable line: time, name, session, status, duration, key figures. */
export function formatEventLine(event: AnyCompactEvent): string {
  const duration = Math.max(0, Number(event.endTime) - Number(event.startTime)) || 0;
  const head = `[compact] ${isoTime(event.startTime)} ${String(event.name)} session=${String(event.sessionId)} span=${String(event.spanId)} ${
    event.status === 'error' ? 'ERROR' : 'ok'
  } ${duration}ms`;
  const p = (event.properties ?? {}) as unknown as Record<string, unknown>;
  const summary = summaryTextOf(event);
  const figures = Object.entries(p)
    .filter(([key, value]) => key !== 'summary' && key !== 'prunedIds' && value !== undefined)
    .map(([key, value]) => `${key}=${short(value, 60)}`);
  if (summary !== undefined) figures.push(`summary="${short(summary)}"`);
  return `${head} ${figures.join(' ')}`.trimEnd();
}

/**
 * Writes one line per event to a stream (stderr by default): readable, or JSON Lines.
 *
 * @example
 * ```ts
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000,
 *   exporters: [consoleExporter({ format: 'json', stream: process.stdout })] });
 * ```
 */
export function consoleExporter(options: ConsoleExporterOptions = {}): EventExporter {
  const format = options.format ?? DEFAULT_CONSOLE_OPTIONS.format;
  const stream = options.stream ?? process.stderr;
  const summary = new CompactionLines();
  let closed = false;
  return {
    name: 'console',
    async export(events) {
      if (closed) return;
      const lines: string[] = [];
      for (const raw of events) {
        try {
          const event = prepareEvent(raw, options);
          if (format === 'summary') {
            const line = summary.line(event);
            if (line !== undefined) lines.push(line);
          } else if (format === 'json') {
            const { startTime, endTime, properties, ...rest } = event;
            lines.push(
              JSON.stringify({
                ...(toWireValue(rest) as object),
                operation_id: operationIdOf(event),
                started_at: isoTime(startTime),
                ended_at: isoTime(endTime),
                duration_ms: Math.max(0, Number(endTime) - Number(startTime)) || 0,
                properties: toWireValue(properties),
              }),
            );
          } else {
            lines.push(formatEventLine(event));
          }
        } catch (error) {
          lines.push(`[compact] could not format an event: ${String((error as Error)?.message ?? error)}`);
        }
      }
      if (lines.length === 0) return;
      // Lines carry the conversation's text (session ids, error messages, summaries) to a
      // terminal: its escape sequences and bidi overrides are made visible, never acted on, and
      // a newline inside one (a session id's) cannot start a line that reads as another event.
      const text = lines.map((line) => line.replaceAll('\n', '\\u{0a}')).join('\n');
      try {
        stream.write(`${format === 'json' ? jsonTerminalText(text) : terminalText(text)}\n`);
      } catch {
        // A closed stream must not break the agent loop.
      }
    },
    async forceFlush() {},
    async shutdown() {
      closed = true;
    },
  };
}
