import { mkdir, readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CompactError } from '../../core/errors.js';
import type { CompactManagerOptions } from '../../core/manager/manager-options.js';
import { jsonlExporter } from '../../exporters/jsonl/jsonl-exporter.js';
import { fsStorage } from '../../storage/fs/fs-storage.js';
import { writePrivateFile } from '../../storage/fs/private-files.js';
import { memoryStorage } from '../../storage/memory/memory-storage.js';
import { sessionFolderName } from '../../storage/session-path.js';
import type { CliIo } from '../cli-io.js';
import { compactionTable, formatNumber } from './format-table.js';
import { createProgress, type Progress } from './progress.js';
import { readTranscript } from './read-transcript.js';
import { type ReplayResult, replayTranscript } from './run-replay.js';

/** The flags `replay` (and `report` on a transcript) read besides the manager's. */
export interface ReplayFlags {
  out?: string;
  trace?: string;
  sessionId?: string;
}

/**
 * Replays the transcript at `file` with progress on stderr, archiving to `--out` and writing
 * the JSONL trace to `--trace` when given.
 */
export async function replayFile(
  file: string,
  options: CompactManagerOptions,
  flags: ReplayFlags,
  io: CliIo,
): Promise<ReplayResult> {
  const input = await readTranscript(file, io.stdin, io.stderr);
  const manager: CompactManagerOptions = { ...options };
  // Without --out the replay archives all the same, in memory (dropped at the end): an archive
  // changes what compaction sends (cleared outputs and summaries point at what they archived),
  // so the result is the same with or without --out.
  if (flags.out !== undefined) {
    manager.storage = fsStorage({ path: flags.out });
    await warnArchived(join(flags.out, sessionFolderName(flags.sessionId ?? 'replay')), io);
  } else manager.storage ??= memoryStorage();
  if (flags.trace !== undefined) {
    await startTrace(flags.trace);
    const trace = jsonlExporter({ path: flags.trace, maxBytes: 0 });
    manager.exporters = [...(options.exporters ?? []), trace];
  }
  // Made at the first call, when the number of calls is known.
  const shown: { progress?: Progress } = {};
  const result = await replayTranscript(input, {
    manager,
    sessionId: flags.sessionId ?? 'replay',
    onProgress: (done, total, compactions) => {
      shown.progress ??= createProgress(total, io.stderr, io.isTTY === true);
      shown.progress.update(done, compactions);
    },
  });
  shown.progress?.finish();
  return result;
}

/**
 * A session folder already archived (the same replay run twice): the replay adds to it as a
 * restarted process would, its summary versions going on above the archived ones, and `status`
 * and `report` then count both runs. Said once, so the figures do not surprise.
 */
async function warnArchived(folder: string, io: CliIo): Promise<void> {
  const entries = await readdir(folder).catch(() => []);
  if (entries.length === 0) return;
  io.stderr(
    `warning: ${folder} already holds an archived session: this replay adds to it (status and report count both runs; another --out or --session-id keeps them apart)\n`,
  );
}

/**
 * Empties (or creates) the `--trace` file before the replay: the trace holds this replay's
 * calls only (appended to an earlier one, `report` drew both runs as one session), and a path
 * that cannot be written is one error line before any work, not an exporter line per batch.
 */
async function startTrace(path: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    await writePrivateFile(path, '', { what: '--trace' });
  } catch (error) {
    if (error instanceof CompactError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new CompactError('invalid_config', `--trace ${path}: cannot write (${code})`, { cause: error });
  }
}

/** The line above the table: what was replayed against which window. */
export function replayHeadline(file: string, result: ReplayResult): string {
  const calls = result.trace.calls.length;
  return `replay ${file}: ${formatNumber(result.messages)} messages, ${formatNumber(calls)} calls, ${result.model} (window ${formatNumber(result.maxContextTokens)}, trigger ${formatNumber(result.triggerTokens)}, budget ${formatNumber(result.budget)})`;
}

/** The closing line: compactions, largest request sent, time. */
export function replayFooter(result: ReplayResult): string {
  const { calls, compactions } = result.trace;
  const largest = calls.reduce((max, call) => Math.max(max, call.tokensSent), 0);
  const errors = compactions.reduce((n, c) => n + c.errors.length, 0) + result.trace.otherErrors.length;
  const { hitShare, prefixRewrites, billedInputEquivalent } = result.cache;
  return `${compactions.length} compaction${compactions.length === 1 ? '' : 's'} in ${calls.length} calls; largest request sent ${formatNumber(largest)} tokens; ${errors} error${errors === 1 ? '' : 's'}; ${(result.elapsedMs / 1000).toFixed(1)} s
prompt cache (modeled: what each request shares with the previous one is read from it): ${(100 * hitShare).toFixed(1)}% hit, ${prefixRewrites} prefix rewrites, billed-equivalent input ${formatNumber(billedInputEquivalent)} tokens`;
}

/** `agent-compaction replay FILE`: prints the table (or JSON with `--json`). */
export async function runReplayCommand(
  file: string,
  options: CompactManagerOptions,
  flags: ReplayFlags & { json?: boolean },
  io: CliIo,
): Promise<void> {
  if (flags.out !== undefined && flags.out === '')
    throw new CompactError('invalid_config', '--out must name a folder');
  const result = await replayFile(file, options, flags, io);
  if (flags.json) {
    const { compactions, calls } = result.trace;
    io.stdout(`${JSON.stringify({ calls: calls.length, compactions, cache: result.cache }, null, 2)}\n`);
    return;
  }
  io.stdout(
    `${replayHeadline(file, result)}\n\n${compactionTable(result.trace)}\n\n${replayFooter(result)}\n`,
  );
  if (flags.trace !== undefined) io.stdout(`trace: ${flags.trace}\n`);
  if (flags.out !== undefined) io.stdout(`${await archiveLine(flags.out, result)}\n`);
}

/** Where the archive went, or that it was not (all) written: a failed write never stops a replay. */
async function archiveLine(out: string, result: ReplayResult): Promise<string> {
  const { compactions, otherErrors } = result.trace;
  const failed = [...compactions.flatMap((c) => c.errors), ...otherErrors].some(
    (error) => error.fallback === 'continue without archive',
  );
  if (!failed) return `archive: ${out}`;
  const made = await stat(out).then(
    (info) => info.isDirectory(),
    () => false,
  );
  return made
    ? `archive: ${out} (incomplete: some writes failed, see the errors above)`
    : `archive: none written (${out} could not be written, see the errors above)`;
}
