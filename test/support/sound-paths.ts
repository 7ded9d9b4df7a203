/**
 * Shared pieces of the property test of issue 43 (test/integrations/): a neutral transcript
 * that renders to every wire format and to the `CompactMessage` form, tool outputs sized as a
 * share of the window, the scripted loopback model that extends the transcript as it replies,
 * an LLM summarizer on a loopback server of its own, and the ledger of what every path reached
 * (cascade levels from the manager's `compact.reduction` events, requests checked, violations).
 */
import OpenAI from 'openai';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import type { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactionResult } from '../../src/core/manager/manager-options.js';
import type { Summarizer } from '../../src/core/summary/summarizer.js';
import { openaiSummarizer } from '../../src/summarizers/openai/openai-summarizer.js';
import { checkSoundRequest, type SoundRequestViolation } from '../../src/testing/assert-sound-request.js';
import {
  type ProviderTestServer,
  type RecordedRequest,
  startProviderTestServer,
} from '../../src/testing/provider-test-server.js';
import { providerProblems } from './provider-rules.js';

/** The window every path runs in, and the summary key of every manager. */
export const WINDOW = 8000;
/** The managers' budget at that window: the default buffer is a tenth of a small window. */
export const BUDGET = WINDOW - Math.floor(WINDOW * 0.1);
export const SUMMARY_KEY = 'sound-requests-property-key-0123456789';
export const TOOL = 'probe';

/** The levels counted per path; give-way ones are read from `compact.reduction`'s `gaveWay`. */
export const LEVELS = [
  'clear',
  'shorten_arguments',
  'give_way_shorten',
  'give_way_clear',
  'summarize',
  'cut_oversized',
  'summary_lines',
] as const;
export type Level = (typeof LEVELS)[number];

/** One message of a neutral transcript (rendered to each wire format). */
export type Turn =
  | { kind: 'user'; text: string }
  | { kind: 'answer'; text: string }
  | { kind: 'call'; id: string; args: Record<string, unknown> }
  | { kind: 'result'; id: string; output: string };

const WORDS =
  'status ok latency queue depth host web cache miss retry backoff shard replica lag disk io error none'.split(
    ' ',
  );

/** A tool output of about `tokens` tokens, distinct per `tag`. */
export function outputOf(tag: string, tokens: number): string {
  const lines: string[] = [];
  for (let line = 0; line * 12 < tokens; line++) {
    const word = (k: number) => WORDS[(line * 7 + k * 3 + tag.length) % WORDS.length];
    lines.push(`${tag} ${line}: ${word(0)}=${line % 97} ${word(1)} ${word(2)} host=web-${line}`);
  }
  return lines.join('\n');
}

/** Arguments of a call: small, or with a long `note` (for the shorten-arguments level). */
export function argsOf(step: number, noteTokens: number): Record<string, unknown> {
  return noteTokens > 0 ? { step, note: outputOf(`note${step}`, noteTokens) } : { step };
}

/** A user text of about `tokens` tokens. */
export function userText(tag: string, tokens = 20): string {
  return `${tag}: probe every host, one at a time, then report. ${outputOf(`${tag}u`, Math.max(0, tokens - 20))}`;
}

/** The transcript in the library's own `CompactMessage` form (a system prompt first when given). */
export function compactForm(turns: readonly Turn[], system?: string): unknown[] {
  const out: unknown[] = [];
  const add = (role: string, text: string, extra: Record<string, unknown> = {}) =>
    out.push({
      id: `m${out.length}`,
      index: out.length,
      role,
      kind: 'message',
      text,
      toolCalls: [],
      toolResults: [],
      ...extra,
    });
  if (system !== undefined) add('system', system);
  for (const turn of turns) {
    if (turn.kind === 'user') add('user', turn.text);
    else if (turn.kind === 'answer') add('assistant', turn.text);
    else if (turn.kind === 'call')
      add('assistant', '', {
        toolCalls: [{ id: turn.id, name: TOOL, arguments: JSON.stringify(turn.args) }],
      });
    else add('tool', '', { toolResults: [{ callId: turn.id, output: turn.output }] });
  }
  return out;
}

/** The transcript as OpenAI Chat messages. */
export function chatForm(turns: readonly Turn[]): Record<string, unknown>[] {
  return turns.map((turn) => {
    if (turn.kind === 'user') return { role: 'user', content: turn.text };
    if (turn.kind === 'answer') return { role: 'assistant', content: turn.text };
    if (turn.kind === 'call')
      return {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: turn.id, type: 'function', function: { name: TOOL, arguments: JSON.stringify(turn.args) } },
        ],
      };
    return { role: 'tool', tool_call_id: turn.id, content: turn.output };
  });
}

/** The transcript as Anthropic messages (each call its own assistant turn, each result its own user turn). */
export function anthropicForm(turns: readonly Turn[]): { role: 'user' | 'assistant'; content: unknown }[] {
  return turns.map((turn) => {
    if (turn.kind === 'user') return { role: 'user', content: turn.text };
    if (turn.kind === 'answer') return { role: 'assistant', content: turn.text };
    if (turn.kind === 'call')
      return {
        role: 'assistant',
        content: [{ type: 'tool_use', id: turn.id, name: TOOL, input: turn.args }],
      };
    return { role: 'user', content: [{ type: 'tool_result', tool_use_id: turn.id, content: turn.output }] };
  });
}

/** The transcript as AI SDK `ModelMessage`s. */
export function modelForm(turns: readonly Turn[]): unknown[] {
  return turns.map((turn) => {
    if (turn.kind === 'user') return { role: 'user', content: turn.text };
    if (turn.kind === 'answer') return { role: 'assistant', content: turn.text };
    if (turn.kind === 'call')
      return {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: turn.id, toolName: TOOL, input: turn.args }],
      };
    return {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: turn.id,
          toolName: TOOL,
          output: { type: 'text', value: turn.output },
        },
      ],
    };
  });
}

/** What one path reached over all its runs. */
export interface PathLedger {
  levels: Record<Level, number>;
  requests: number;
  compactions: number;
  violations: string[];
}

/** The ledger of every path (filled by the drivers, printed and asserted by the test). */
export class Ledger {
  readonly paths = new Map<string, PathLedger>();
  steps = 0;

  of(path: string): PathLedger {
    let ledger = this.paths.get(path);
    if (!ledger) {
      ledger = {
        levels: Object.fromEntries(LEVELS.map((level) => [level, 0])) as Record<Level, number>,
        requests: 0,
        compactions: 0,
        violations: [],
      };
      this.paths.set(path, ledger);
    }
    return ledger;
  }

  /** Counts the levels of the manager's `compact.reduction` events on `path`. */
  listen(path: string, manager: CompactManager): void {
    manager.on('*', (event) => this.#count(path, event as AnyCompactEvent));
  }

  #count(path: string, event: AnyCompactEvent): void {
    if (event.name !== 'compact.reduction') return;
    const {
      level,
      count,
      gaveWay = 0,
      summaryLinesGivenUp = 0,
    } = event.properties as { level: string; count: number; gaveWay?: number; summaryLinesGivenUp?: number };
    const levels = this.of(path).levels;
    if (level === 'clear_tool_results') {
      levels.clear += count - gaveWay;
      levels.give_way_clear += gaveWay;
    } else if (level === 'cut_oversized') {
      levels.cut_oversized += count - gaveWay;
      levels.give_way_shorten += gaveWay;
      // The summary gave up lines so that the newest message went whole (trim-summary-lines.ts).
      if (summaryLinesGivenUp > 0) levels.summary_lines += 1;
    } else if (level === 'shorten_arguments') levels.shorten_arguments += count;
    else if (level === 'summarize') {
      levels.summarize += 1;
      this.of(path).compactions++;
    }
  }

  /** Counts the levels of a result (paths whose manager the test cannot listen to). */
  countResult(path: string, result: Pick<CompactionResult<unknown>, 'levels'>): void {
    for (const report of result.levels)
      this.#count(path, {
        name: 'compact.reduction',
        properties: report,
      } as unknown as AnyCompactEvent);
  }

  /** Checks one recorded request against the history it was built from. */
  check(
    path: string,
    request: RecordedRequest | { body: unknown; seq: number },
    given: readonly unknown[],
    context: {
      sessionId?: string;
      keys?: 'default';
      model?: string;
      /** Count as the provider does (the test server: 4 characters of the body per token). */
      reported?: boolean;
      /** Whether the window applies. @default true */
      window?: boolean;
      note?: string;
    } = {},
  ): SoundRequestViolation[] {
    const ledger = this.of(path);
    ledger.requests++;
    const extra = summaryFormProblems(stringsOf(request.body)).map(
      (message): SoundRequestViolation => ({ rule: 'summary', message }),
    );
    const violations = checkSoundRequest({
      request: request.body,
      given,
      ...(context.sessionId === undefined ? {} : { sessionId: context.sessionId }),
      ...(context.keys === 'default' ? {} : { summaryKeys: SUMMARY_KEY }),
      ...(context.window === false ? {} : { maxContextTokens: WINDOW, budgetTokens: BUDGET }),
      model: context.model ?? 'gpt-4o',
      ...(context.reported && 'rawBody' in request
        ? { countTokens: () => Math.ceil(request.rawBody.length / 4) }
        : {}),
    });
    violations.push(...extra);
    // What the provider's API itself refuses, read from the raw body (review 84d).
    if ('endpoint' in request)
      for (const message of providerProblems(request.endpoint, request.body))
        violations.push({ rule: 'unreadable', message: `provider refuses: ${message}` });
    for (const violation of violations)
      if (ledger.violations.length < 40)
        ledger.violations.push(
          `#${request.seq}${context.note ? ` ${context.note}` : ''}: [${violation.rule}] ${violation.message}`,
        );
    return violations;
  }
}

/** Every string of a request body (message texts, content blocks, the system prompt). */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsOf(item, out);
  return out;
}

const OPEN_TAG = /<COMPACT-SUMMARY v\d+>/g;
const CLOSE_TAG = /<\/COMPACT-SUMMARY>/g;
/** A summary's end: its mark line, then the closing tag. */
const MARKED_END = /\n\[summary-mark \d+\]\n<\/COMPACT-SUMMARY>/;

/**
 * Whether the request's summary is well formed: at most one, in one string, the opening tag
 * before the closing one, its mark line right before the closing tag (a trimmed summary too).
 */
function summaryFormProblems(texts: readonly string[]): string[] {
  const opens = texts.reduce((sum, text) => sum + (text.match(OPEN_TAG)?.length ?? 0), 0);
  const closes = texts.reduce((sum, text) => sum + (text.match(CLOSE_TAG)?.length ?? 0), 0);
  if (opens === 0 && closes === 0) return [];
  if (opens !== 1 || closes !== 1) return [`${opens} opening and ${closes} closing summary tags`];
  const text = texts.find((candidate) => candidate.search(OPEN_TAG) >= 0) ?? '';
  const open = text.search(OPEN_TAG);
  const close = text.search(CLOSE_TAG);
  if (close < open) return ['the summary closes in another message or before it opens'];
  if (!MARKED_END.test(text.slice(open))) return ['the summary has no mark line before its closing tag'];
  return [];
}

/** The scripted model of a tool loop: `steps` calls, then an answer; it extends `turns` as it replies. */
export interface LoopScript {
  /** The transcript so far (what the SDK holds, uncompacted). */
  turns: Turn[];
  /** The given history of each agent request, by its seq. */
  givenAt: Map<number, Turn[]>;
  /** Starts a new run: the user's message, and how many calls before the answer. */
  startRun(text: string, steps: number): void;
  /** The output the tool returns for step `step`. */
  output(step: number): string;
}

/** Options of {@link loopScript}: per step, the output's and the arguments' size in tokens. */
export interface LoopSizes {
  outputTokens: readonly number[];
  noteTokens: readonly number[];
}

/** A script and the loopback server that plays it. */
export async function loopServer(
  sizes: LoopSizes,
  idPrefix = 'call_',
): Promise<{
  server: ProviderTestServer;
  script: LoopScript;
}> {
  let left = 0;
  let step = 0;
  const script: LoopScript = {
    turns: [],
    givenAt: new Map(),
    startRun(text, steps) {
      script.turns.push({ kind: 'user', text });
      left = steps;
    },
    output: (k) => outputOf(`out${k}`, sizes.outputTokens[k % sizes.outputTokens.length]!),
  };
  const server = await startProviderTestServer({
    handler: (request) => {
      if (request.endpoint === 'other') return undefined;
      script.givenAt.set(request.seq, [...script.turns]);
      if (left > 0) {
        left--;
        const k = step++;
        const id = `${idPrefix}${String(k).padStart(4, '0')}`;
        const args = argsOf(k, sizes.noteTokens[k % sizes.noteTokens.length]!);
        script.turns.push({ kind: 'call', id, args }, { kind: 'result', id, output: script.output(k) });
        return { toolCalls: [{ id, name: TOOL, arguments: args }] };
      }
      const text = `Done after ${step} steps.`;
      script.turns.push({ kind: 'answer', text });
      return { text };
    },
  });
  return { server, script };
}

/** An LLM summarizer (the OpenAI one) over a loopback server that writes a structured summary. */
export async function llmSummarizer(): Promise<{ summarizer: Summarizer; server: ProviderTestServer }> {
  const server = await startProviderTestServer({
    handler: (request) => {
      const body = JSON.stringify(request.body ?? {});
      const task = /## Task\\n([^\\]{0,200})/.exec(body)?.[1] ?? 'Probe every host, one at a time.';
      return {
        text: `## Task\n${task.split('\\n')[0]}\n## Progress\n- probed hosts; all status ok so far\n## Next\n- probe the next host`,
      };
    },
  });
  const client = new OpenAI({ apiKey: 'test-key', baseURL: server.openaiBaseURL, maxRetries: 0 });
  return { summarizer: openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 0 }), server };
}
