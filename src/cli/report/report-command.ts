import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CompactError } from '../../core/errors.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import type { CompactManagerOptions } from '../../core/manager/manager-options.js';
import { redactDeep } from '../../core/redaction/redactor.js';
import { counted, renderReport } from '../../report/render-report.js';
import { buildTraceModel, parseTrace } from '../../report/trace-model.js';
import { writePrivateFile } from '../../storage/fs/private-files.js';
import { type CliIo, reportRedactor } from '../cli-io.js';
import { readStdin } from '../read-input.js';
import { isDirectory } from '../replay/read-transcript.js';
import { type ReplayFlags, replayFile } from '../replay/replay-command.js';
import { dropTornLastLine } from '../torn-line.js';

/** Events to report on, and where they came from. */
export interface LoadedTrace {
  events: AnyCompactEvent[];
  source: string;
  note?: string;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new CompactError(
      'invalid_messages',
      `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
}

/** True when the first non-blank line of `text` is a compaction event (a trace, not a transcript). */
export function looksLikeTrace(text: string): boolean {
  const first = text.split(/\r?\n/).find((line) => line.trim() !== '');
  if (first === undefined) return false;
  try {
    const value = JSON.parse(first) as { name?: unknown };
    return (
      value !== null &&
      typeof value === 'object' &&
      typeof value.name === 'string' &&
      value.name.startsWith('compact.')
    );
  } catch {
    return false;
  }
}

/**
 * The events behind a report: a JSONL trace file as it is, an archived session folder's
 * `events.jsonl`, or a transcript (file or archive folder without events) replayed first.
 */
export async function loadTrace(
  path: string,
  options: CompactManagerOptions,
  flags: ReplayFlags,
  io: CliIo,
): Promise<LoadedTrace> {
  if (path === '-') {
    // stdin reads once: a trace is reported as it is, a transcript replayed from the same bytes.
    const bytes = await readStdin(io.stdin);
    const text = bytes.toString('utf8');
    if (looksLikeTrace(text))
      return { events: parseTrace(dropTornLastLine(text, 'stdin', io.stderr), 'stdin'), source: 'stdin' };
    const result = await replayFile(path, options, flags, { ...io, stdin: Readable.from([bytes]) });
    return { events: result.events, source: 'stdin (replayed)' };
  }
  if (await isDirectory(path)) {
    const eventsFile = join(path, 'events.jsonl');
    const text = await readFile(eventsFile, 'utf8').catch(() => undefined);
    if (text !== undefined && text.trim() !== '') {
      return {
        events: parseTrace(dropTornLastLine(text, eventsFile, io.stderr), eventsFile),
        source: path,
        note: "From an archive's events.jsonl, which records the calls that compacted only: the chart shows those calls.",
      };
    }
  } else {
    const text = await readText(path);
    if (looksLikeTrace(text))
      return { events: parseTrace(dropTornLastLine(text, path, io.stderr), path), source: path };
  }
  const result = await replayFile(path, options, flags, io);
  return { events: result.events, source: `${path} (replayed)` };
}

/** `agent-compaction report FILE|DIR --out report.html`. */
export async function runReportCommand(
  path: string,
  options: CompactManagerOptions,
  flags: ReplayFlags,
  io: CliIo,
): Promise<void> {
  const out = flags.out;
  if (out === undefined || out === '')
    throw new CompactError(
      'invalid_config',
      '--out FILE is required for report (where to write the HTML page)',
    );
  // --out is the page here, not an archive folder.
  const { out: _page, ...replayFlags } = flags;
  const loaded = await loadTrace(path, options, replayFlags, io);
  // Defence in depth: a trace file may come from elsewhere; redact it again like every export.
  const redact = await reportRedactor(options.redaction);
  const events = redact ? redactDeep(loaded.events, redact) : loaded.events;
  const trace = buildTraceModel(events);
  const html = renderReport(trace, { source: loaded.source, ...(loaded.note ? { note: loaded.note } : {}) });
  // 0600 like the archive it reads, and never through a link planted at --out.
  await writePrivateFile(out, html, { what: '--out' }).catch((error: NodeJS.ErrnoException) => {
    if (error instanceof CompactError) throw error;
    throw new CompactError('invalid_config', `--out ${out}: cannot write (${error.code ?? error.message})`, {
      cause: error,
    });
  });
  io.stdout(
    `report: ${out} (${counted(trace.compactions.length, 'compaction')}, ${counted(trace.calls.length, 'call')})\n`,
  );
}
