import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArchivedSummary } from '../../core/archive/storage-adapter.js';
import { CompactError } from '../../core/errors.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { counted } from '../../report/render-report.js';
import { buildTraceModel, parseTrace, type TraceModel } from '../../report/trace-model.js';
import { newestArchiveName, parseArchiveName } from '../../storage/session-path.js';
import type { CliIo } from '../cli-io.js';
import { formatNumber, levelsText } from '../replay/format-table.js';
import { isDirectory, readLatestTranscript } from '../replay/read-transcript.js';
import { dropTornLastLine } from '../torn-line.js';

/** What `status` reports about an archived session. */
export interface SessionStatus {
  folder: string;
  model?: string;
  window?: number;
  compactions: number;
  lastCompaction?: {
    at?: string;
    version?: number;
    tokensBefore: number;
    tokensAfter: number;
    levels: string;
    fallback: string;
  };
  layers?: { pinned: number; pinnedMessages: number; summary: number; recent: number };
  summary?: { version: number; tokens: number; summarizer: string; strategy: string; text: string };
  errors: { errorType: string; message: string; fallback: string }[];
  /** The cost snapshot from the last reported usage (`compact.usage`), when any was recorded. */
  cost?: { requests: number; hitShare: number; billedInputEquivalent: number; prefixRewrites: number };
}

/** The fields of an archived summary `status` shows, each checked: the file may be damaged or forged. */
function checkedSummary(value: unknown, file: string): ArchivedSummary {
  const summary = value as Partial<Record<keyof ArchivedSummary, unknown>> | null;
  const problem = (field: string, expected: string) =>
    new CompactError('invalid_messages', `${file}: "${field}" must be ${expected}`);
  if (summary === null || typeof summary !== 'object' || Array.isArray(summary))
    throw new CompactError('invalid_messages', `${file}: not a summary object`);
  if (typeof summary.text !== 'string') throw problem('text', 'a string');
  for (const field of ['step', 'tokens'] as const)
    if (typeof summary[field] !== 'number' || !Number.isFinite(summary[field]))
      throw problem(field, 'a number');
  for (const field of ['summarizer', 'strategy'] as const)
    if (summary[field] !== undefined && typeof summary[field] !== 'string') throw problem(field, 'a string');
  if (summary.createdAt !== undefined && !Number.isFinite(new Date(summary.createdAt as never).getTime()))
    throw problem('createdAt', 'a valid date');
  return summary as ArchivedSummary;
}

/** The newest summary of the folder: the highest version, its latest write (see `newestArchiveName`). */
async function latestSummary(folder: string): Promise<ArchivedSummary | undefined> {
  const last = newestArchiveName(await readdir(folder), 'summary');
  if (last === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(await readFile(join(folder, last), 'utf8'));
  } catch (error) {
    throw new CompactError(
      'invalid_messages',
      `${join(folder, last)}: not valid JSON (${(error as Error).message})`,
    );
  }
  return checkedSummary(value, join(folder, last));
}

/**
 * Compactions the archive holds: each writes its transcript (whole or a part) before it prunes
 * anything, while its events are written after it; so a process killed mid-compaction leaves
 * the transcript and may lose the events (issue 43: 8 counted from events at v15).
 */
async function archivedCompactions(folder: string): Promise<number> {
  const names = await readdir(folder);
  return names.filter((name) => parseArchiveName(name)?.kind === 'transcript').length;
}

/** Tokens of the pinned messages (system, developer, protected) of the newest transcript. */
async function pinnedTokens(
  folder: string,
  model: string | undefined,
): Promise<{ tokens: number; count: number }> {
  const transcript = await readLatestTranscript(folder);
  if (transcript === undefined) return { tokens: 0, count: 0 };
  const messages = transcript as { role?: unknown; meta?: { protected?: unknown } }[];
  const pinned = messages.filter(
    (message) =>
      message.role === 'system' || message.role === 'developer' || message.meta?.protected === true,
  );
  if (pinned.length === 0) return { tokens: 0, count: 0 };
  const manager = new CompactManager(model === undefined ? {} : { model, maxContextTokens: 1_000_000 });
  const { breakdown } = manager.estimate(pinned);
  return { tokens: breakdown.system + breakdown.developer + breakdown.messages, count: pinned.length };
}

/** Reads an archived session folder (fs archive layout) into a {@link SessionStatus}. */
export async function readSessionStatus(
  folder: string,
  warn: (line: string) => void = () => {},
): Promise<SessionStatus> {
  if (!(await isDirectory(folder)))
    throw new CompactError(
      'invalid_messages',
      `${folder} is not a folder (expected an archived session, e.g. .compact/archive/<session>)`,
    );
  const eventsFile = join(folder, 'events.jsonl');
  const eventsText = dropTornLastLine(await readFile(eventsFile, 'utf8').catch(() => ''), eventsFile, warn);
  const summary = await latestSummary(folder);
  if (eventsText.trim() === '' && summary === undefined)
    throw new CompactError(
      'invalid_messages',
      `${folder} has no events.jsonl or summary-NNN.json (not an archived session)`,
    );
  const trace: TraceModel | undefined =
    eventsText.trim() === '' ? undefined : buildTraceModel(parseTrace(eventsText, eventsFile));
  const status: SessionStatus = {
    folder,
    compactions: Math.max(trace?.compactions.length ?? 0, await archivedCompactions(folder)),
    errors: [],
  };
  if (trace?.model !== undefined) status.model = trace.model;
  const last = trace?.compactions.at(-1);
  if (last?.call.maxTokens !== undefined) status.window = last.call.maxTokens;
  if (trace) status.errors = [...trace.compactions.flatMap((c) => c.errors), ...trace.otherErrors];
  if (trace?.cost) status.cost = trace.cost;
  if (last) {
    status.lastCompaction = {
      tokensBefore: last.tokensBefore,
      tokensAfter: last.tokensAfter,
      levels: levelsText(last),
      fallback: last.fallback,
      ...(last.version !== undefined ? { version: last.version } : {}),
      ...(summary?.createdAt !== undefined ? { at: new Date(summary.createdAt).toISOString() } : {}),
    };
  }
  if (summary) {
    status.summary = {
      version: summary.step,
      tokens: summary.tokens,
      summarizer: summary.summarizer,
      strategy: summary.strategy,
      text: summary.text,
    };
  }
  if (last) {
    const pinned = await pinnedTokens(folder, status.model);
    // Summary files deleted (an archive pruned by hand): the newest summary's count from the events.
    const summaryTokens =
      summary?.tokens ??
      trace?.compactions.findLast((c) => c.summaryTokens !== undefined)?.summaryTokens ??
      0;
    status.layers = {
      pinned: pinned.tokens,
      pinnedMessages: pinned.count,
      summary: summaryTokens,
      recent: Math.max(0, last.tokensAfter - pinned.tokens - summaryTokens),
    };
  }
  return status;
}

/** The status as lines of text. */
export function formatStatus(status: SessionStatus): string {
  const lines = [`session folder: ${status.folder}`];
  const window = status.window === undefined ? '' : `, window ${formatNumber(status.window)}`;
  lines.push(
    `model: ${status.model ?? 'unknown'}${window}; ${status.compactions} compaction${status.compactions === 1 ? '' : 's'}`,
  );
  const last = status.lastCompaction;
  if (last) {
    const usage = status.window
      ? ` (${((last.tokensAfter / status.window) * 100).toFixed(1)}% of the window)`
      : '';
    lines.push(
      `last compaction${last.at ? ` ${last.at}` : ''}${last.version ? ` (v${last.version})` : ''}: ${formatNumber(last.tokensBefore)} -> ${formatNumber(last.tokensAfter)} tokens${usage}; ${last.levels}; fallback ${last.fallback}`,
    );
  }
  if (status.layers) {
    const { pinned, pinnedMessages, summary, recent } = status.layers;
    lines.push('what the agent remembers (tokens, as of the last compaction):');
    lines.push(`  pinned   ${formatNumber(pinned).padStart(9)}  (${counted(pinnedMessages, 'message')})`);
    lines.push(
      `  summary  ${formatNumber(summary).padStart(9)}${status.summary ? `  (v${status.summary.version}, ${status.summary.summarizer}, ${status.summary.strategy})` : ''}`,
    );
    lines.push(`  recent   ${formatNumber(recent).padStart(9)}`);
  }
  if (status.cost) {
    const { requests, hitShare, billedInputEquivalent, prefixRewrites } = status.cost;
    lines.push(
      `cost: ${requests} reported requests, ${(100 * hitShare).toFixed(1)}% of the input from the prompt cache, billed-equivalent input ${formatNumber(Math.round(billedInputEquivalent))} tokens, ${prefixRewrites} prefix rewrites`,
    );
  } else lines.push('cost: no usage reported (integrations record it; or call manager.recordUsage)');
  lines.push(`errors: ${status.errors.length}`);
  for (const error of status.errors.slice(-5))
    lines.push(`  ${error.errorType}: ${error.message} (fallback ${error.fallback})`);
  if (status.summary) {
    lines.push('summary (first lines):');
    for (const line of status.summary.text.split('\n').slice(0, 8)) lines.push(`  ${line}`);
  }
  return lines.join('\n');
}

/** `agent-compaction status SESSION_DIR [--json]`. */
export async function runStatusCommand(folder: string, flags: { json: boolean }, io: CliIo): Promise<void> {
  const status = await readSessionStatus(folder, io.stderr);
  io.stdout(flags.json ? `${JSON.stringify(status, null, 2)}\n` : `${formatStatus(status)}\n`);
}
