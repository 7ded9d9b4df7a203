import { appendFile, rename, rm, stat, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CompactError } from '../../core/errors.js';
import type { AnyCompactEvent, EventExporter } from '../../core/events/events.js';
import { makeDirs } from '../../core/make-dirs.js';
import type { WritableLike } from '../console/console-exporter.js';
import { defineExporter } from '../define-exporter.js';
import { type ExportPrivacyOptions, prepareEvent } from '../event-utils.js';

/** Options of {@link jsonlExporter}: exactly one of `path` and `stream`. */
export interface JsonlExporterOptions extends ExportPrivacyOptions {
  /**
   * The trace file. Created with its folder when absent (mode 0600), appended to when present.
   * @default undefined
   */
  path?: string;
  /**
   * A writable stream instead of a file (`process.stdout`, a socket). Never rotated.
   * @default undefined
   */
  stream?: WritableLike;
  /**
   * Rotate the file before a write would make it larger than this many bytes: `trace.jsonl`
   * becomes `trace.jsonl.1`, `.1` becomes `.2`, and so on. `0` never rotates. A single line
   * larger than the limit is still written whole, alone in its file.
   * @default 10_485_760 (10 MiB)
   */
  maxBytes?: number;
  /**
   * How many rotated files to keep beside the current one (`trace.jsonl.1` .. `.N`); older
   * ones are deleted.
   * @default 5
   */
  maxFiles?: number;
}

/** The JSONL exporter's defaults. */
export const DEFAULT_JSONL_OPTIONS = Object.freeze({ maxBytes: 10_485_760, maxFiles: 5 });

function invalid(field: string, message: string): CompactError {
  return new CompactError('invalid_argument', `jsonlExporter: ${field} ${message}`, {
    issues: [{ path: [field], message }],
  });
}

/** One event as one line: the event object itself (camelCase, epoch-millisecond times). */
export function eventLine(event: AnyCompactEvent): string {
  return `${JSON.stringify(event, (_key, value) => (typeof value === 'bigint' ? value.toString() : value))}\n`;
}

/** Appends lines to a file, rotating it by size. Calls must not overlap (the caller chains them). */
function rotatingFile(path: string, maxBytes: number, maxFiles: number) {
  let size: number | undefined;
  const rotate = async () => {
    await rm(`${path}.${maxFiles}`, { force: true });
    for (let n = maxFiles - 1; n >= 1; n--) {
      await rename(`${path}.${n}`, `${path}.${n + 1}`).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
    if (maxFiles > 0) await rename(path, `${path}.1`);
    else await rm(path, { force: true });
    size = 0;
  };
  const append = async (text: string) => {
    const before = await stat(path).then(
      (info) => info.size,
      () => undefined,
    );
    try {
      await appendFile(path, text, { encoding: 'utf8', mode: 0o600 });
    } catch (error) {
      // A full disk writes part of the text: cut it off, or the torn line glues to the next
      // batch and leaves a broken line in the middle of the trace, which `report` refuses.
      await truncate(path, before ?? 0).catch(() => {});
      throw error;
    }
    size = (size ?? 0) + Buffer.byteLength(text, 'utf8');
  };
  return async (lines: readonly string[]) => {
    if (size === undefined) {
      await makeDirs(dirname(path));
      size = await stat(path).then(
        (info) => info.size,
        () => 0,
      );
    }
    let pending = '';
    let pendingBytes = 0;
    for (const line of lines) {
      const bytes = Buffer.byteLength(line, 'utf8');
      if (maxBytes > 0 && (size ?? 0) + pendingBytes + bytes > maxBytes && (size ?? 0) + pendingBytes > 0) {
        if (pending !== '') await append(pending);
        pending = '';
        pendingBytes = 0;
        await rotate();
      }
      pending += line;
      pendingBytes += bytes;
    }
    if (pending !== '') await append(pending);
  };
}

/**
 * Writes every event as one JSON line (JSON Lines) to a file or a stream: the trace that
 * `agent-compaction report` and `status` read, in the same shape as an archive's
 * `events.jsonl`. Events arrive redacted by the manager; `redact` and `hashSessionIds`
 * apply on top, as in every exporter. A file is rotated by size (`maxBytes`, keeping
 * `maxFiles` older files).
 *
 * @example
 * ```ts
 * const manager = new CompactManager({ model: 'gpt-5',
 *   exporters: [jsonlExporter({ path: '.compact/trace.jsonl', maxBytes: 5_000_000, maxFiles: 3 })] });
 * // later: npx agent-compaction report .compact/trace.jsonl --out report.html
 * ```
 */
export function jsonlExporter(options: JsonlExporterOptions): EventExporter {
  const { path, stream } = options;
  if ((path === undefined) === (stream === undefined)) throw invalid('path', 'or stream: give exactly one');
  if (path !== undefined && (typeof path !== 'string' || path === ''))
    throw invalid('path', 'must be a non-empty string');
  const maxBytes = options.maxBytes ?? DEFAULT_JSONL_OPTIONS.maxBytes;
  const maxFiles = options.maxFiles ?? DEFAULT_JSONL_OPTIONS.maxFiles;
  if (!Number.isInteger(maxBytes) || maxBytes < 0) throw invalid('maxBytes', 'must be an integer >= 0');
  if (!Number.isInteger(maxFiles) || maxFiles < 0) throw invalid('maxFiles', 'must be an integer >= 0');
  const write =
    path !== undefined
      ? rotatingFile(path, maxBytes, maxFiles)
      : async (lines: readonly string[]) => void stream?.write(lines.join(''));
  let tail: Promise<void> = Promise.resolve();
  return defineExporter({
    name: 'jsonl',
    export(events) {
      const lines: string[] = [];
      for (const event of events) {
        try {
          lines.push(eventLine(prepareEvent(event, options)));
        } catch {
          // An event that cannot be serialized is skipped, never fatal.
        }
      }
      // Batches are written in order, one after another.
      const next = tail.then(() => write(lines));
      tail = next.catch(() => {});
      return next;
    },
    forceFlush: () => tail,
  });
}
