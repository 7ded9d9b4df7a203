/**
 * Histories that jump (issue 43 point 3), sent through the paths that take a whole history
 * per call: Anthropic withCompaction (create, stream), both forms of compactThreadHistory, the
 * AI SDK's generateText, the CLI's `compact` and `compactMessages`. Each op (grow, rewind,
 * edit, fork, switch, reuse the session id for another conversation, restart) gives the next
 * history; every path sends it, through a real SDK client, to the loopback server, and the
 * request is checked against that history.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { generateText, wrapLanguageModel } from 'ai';
import OpenAI from 'openai';
import { compactionMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { compactThreadHistory, withCompaction } from '../../src/adapters/anthropic/index.js';
import { compactMessages } from '../../src/core/compact-messages.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';
import type { Summarizer } from '../../src/core/summary/summarizer.js';
import type { ProviderTestServer } from '../../src/testing/provider-test-server.js';
import { cli } from './cli-fixtures.js';
import {
  anthropicForm,
  argsOf,
  chatForm,
  compactForm,
  type Ledger,
  modelForm,
  outputOf,
  SUMMARY_KEY,
  type Turn,
  userText,
  WINDOW,
} from './sound-paths.js';

const SYSTEM = 'You are an SRE agent. Probe every host before answering; never restart a host.';
const CLAUDE = 'claude-sonnet-4-6';

/** One change of the caller's history. */
export type JumpOp =
  | {
      kind: 'grow';
      outputPct: number[];
      notePct: number;
      hugePct?: number;
      pastePct: number;
      answer: boolean;
    }
  | { kind: 'rewind' | 'edit'; at: number }
  | { kind: 'fork' | 'switch' | 'reuse' | 'restart' };

/** The caller: its history, a saved branch, and fresh names for new content. */
export class JumpHistory {
  turns: Turn[] = [];
  #branch: Turn[] | undefined;
  #conversation = 0;
  #fresh = 0;

  /** Applies `op`; returns the history of the next call. */
  apply(op: JumpOp): Turn[] {
    const tag = () => `c${this.#conversation}n${++this.#fresh}`;
    switch (op.kind) {
      case 'rewind': {
        // Onto a tool result when there is one: the agent re-runs from there (issue 43, rewinds).
        const ends = this.turns.flatMap((turn, k) =>
          turn.kind === 'result' || turn.kind === 'answer' ? [k + 1] : [],
        );
        if (ends.length > 0) this.turns = this.turns.slice(0, ends[op.at % ends.length]);
        break;
      }
      case 'edit': {
        const users = this.turns.flatMap((turn, k) => (turn.kind === 'user' ? [k] : []));
        const at = users[op.at % Math.max(1, users.length)];
        if (at !== undefined) {
          const turn = this.turns[at] as Extract<Turn, { kind: 'user' }>;
          this.turns = this.turns.map((t, k) =>
            k === at ? { kind: 'user', text: `${turn.text} (edited ${tag()})` } : t,
          );
        }
        this.#grow({ kind: 'grow', outputPct: [3], notePct: 0, pastePct: 0, answer: true }, tag());
        break;
      }
      case 'fork':
        this.#branch = this.turns;
        this.#grow({ kind: 'grow', outputPct: [5], notePct: 0, pastePct: 0, answer: false }, tag());
        break;
      case 'switch':
        if (this.#branch) [this.turns, this.#branch] = [this.#branch, this.turns];
        else this.#grow({ kind: 'grow', outputPct: [2], notePct: 0, pastePct: 0, answer: true }, tag());
        break;
      case 'reuse':
        this.#conversation++;
        this.#branch = undefined;
        this.turns = [];
        this.#grow({ kind: 'grow', outputPct: [4, 8], notePct: 0, pastePct: 0, answer: false }, tag());
        break;
      case 'restart':
        break;
      default:
        this.#grow(op, tag());
    }
    if (this.turns.length === 0)
      this.#grow({ kind: 'grow', outputPct: [], notePct: 0, pastePct: 0, answer: false }, tag());
    return this.turns;
  }

  #grow(op: Extract<JumpOp, { kind: 'grow' }>, tag: string): void {
    const turns: Turn[] = [
      { kind: 'user', text: userText(`mk-${tag}`, Math.round((op.pastePct * WINDOW) / 100)) },
    ];
    // Ids numbered per conversation, as many SDKs do: two conversations reuse them.
    let n = this.turns.filter((turn) => turn.kind === 'call').length;
    // A paste is never the newest message: the agent works on it (a tool round at least), so it
    // stays in the verbatim suffix, too long for the window (the cut of oversized messages).
    // A call with huge arguments (a file written whole) is cut while it is the latest round.
    const huge = op.hugePct ?? 0;
    const outputs = (op.pastePct > 0 || huge > 0) && op.outputPct.length === 0 ? [2] : op.outputPct;
    outputs.forEach((pct, k) => {
      const id = `call_${n++}`;
      const note = k === outputs.length - 1 && huge > 0 ? huge : op.notePct;
      turns.push(
        { kind: 'call', id, args: argsOf(n, Math.round((note * WINDOW) / 100)) },
        { kind: 'result', id, output: outputOf(`${tag}r${n}`, Math.round((pct * WINDOW) / 100)) },
      );
    });
    if (op.answer) turns.push({ kind: 'answer', text: `Answer ${tag}: all hosts ok.` });
    this.turns = [...this.turns, ...turns];
  }
}

/** A path that sends a whole history per call. */
export interface JumpPath {
  name: string;
  /** Sends `turns` (one request); `restart` first when the op was a restart. */
  call(turns: readonly Turn[], restart: boolean): Promise<void>;
  close(): Promise<void>;
}

/** What the jump paths share: the agent's server, the summarizer's, a temp folder. */
export interface JumpContext {
  ledger: Ledger;
  server: ProviderTestServer;
  summaryServer: ProviderTestServer;
  summarizer: Summarizer | undefined;
  dir: string;
  run: number;
}

function lastRequest(server: ProviderTestServer) {
  const request = server.requests.at(-1);
  if (!request) throw new Error('no request recorded');
  return request;
}

/** A path over a manager that lives across calls (a new one on restart, over the same store). */
function managed(
  context: JumpContext,
  name: string,
  model: string,
  send: (manager: CompactManager, session: string, turns: readonly Turn[]) => Promise<void>,
): JumpPath {
  const store = new MemorySessionStore();
  const session = `${name}-${context.run}`;
  const open = () => {
    const manager = new CompactManager({
      model,
      maxContextTokens: WINDOW,
      summaryKeys: SUMMARY_KEY,
      store,
      ...(context.summarizer ? { summarizer: context.summarizer } : {}),
    });
    context.ledger.listen(name, manager);
    return manager;
  };
  let manager = open();
  return {
    name,
    async call(turns, restart) {
      if (restart) {
        await manager.shutdown();
        manager = open();
      }
      await send(manager, session, turns);
      context.ledger.steps++;
      context.ledger.check(name, lastRequest(context.server), compactForm(turns, SYSTEM), {
        sessionId: session,
        model,
        reported: model.startsWith('claude'),
        note: `(${turns.length} messages)`,
      });
    },
    close: () => manager.shutdown(),
  };
}

/** Every jump path over `context`. */
export function jumpPaths(context: JumpContext): JumpPath[] {
  const { server } = context;
  const anthropic = new Anthropic({ apiKey: 'test-key', baseURL: server.anthropicBaseURL, maxRetries: 0 });
  const openai = new OpenAI({ apiKey: 'test-key', baseURL: server.openaiBaseURL, maxRetries: 0 });
  const params = (messages: unknown[]) => ({
    model: CLAUDE,
    max_tokens: 256,
    system: SYSTEM,
    messages: messages as Anthropic.MessageParam[],
  });
  return [
    managed(context, 'anthropic: create', CLAUDE, async (manager, sessionId, turns) => {
      await withCompaction(anthropic, manager, { sessionId }).messages.create(params(anthropicForm(turns)));
    }),
    managed(context, 'anthropic: stream', CLAUDE, async (manager, sessionId, turns) => {
      await withCompaction(anthropic, manager, { sessionId })
        .messages.stream(params(anthropicForm(turns)))
        .finalMessage();
    }),
    managed(
      context,
      'anthropic: compactThreadHistory (manager)',
      CLAUDE,
      async (manager, sessionId, turns) => {
        const result = await compactThreadHistory({
          manager,
          sessionId,
          threadHistory: anthropicForm(turns),
          systemPrompt: SYSTEM,
        });
        await anthropic.messages.create(params(result.messages));
      },
    ),
    managed(context, 'ai-sdk: generateText (chat)', 'gpt-4o', async (manager, sessionId, turns) => {
      const provider = createOpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test-key' });
      await generateText({
        model: wrapLanguageModel({
          model: provider.chat('gpt-4o'),
          middleware: compactionMiddleware(manager, { sessionId }),
        }),
        system: SYSTEM,
        messages: modelForm(turns) as never,
      });
    }),
    specThread(context, anthropic),
    cliCompact(context, openai),
    compactMessagesPath(context, openai),
  ];
}

/** The spec's compactThreadHistory (no manager): its summary call goes to the summarizer's server. */
function specThread(context: JumpContext, anthropic: Anthropic): JumpPath {
  const name = 'anthropic: compactThreadHistory (spec)';
  const summaries = new Anthropic({
    apiKey: 'test-key',
    baseURL: context.summaryServer.anthropicBaseURL,
    maxRetries: 0,
  });
  let calls = 0;
  return {
    name,
    async call(turns) {
      const traceId = `spec-${context.run}-${calls++}`;
      const result = await compactThreadHistory({
        threadHistory: anthropicForm(turns) as never,
        systemPrompt: SYSTEM,
        anthropic: summaries,
        model: CLAUDE,
        maxContextTokens: WINDOW,
        keepLastN: 6,
        traceId,
      });
      if (result.compactionApplied) context.ledger.of(name).levels.summarize++;
      await anthropic.messages.create({
        model: CLAUDE,
        max_tokens: 256,
        system: SYSTEM,
        messages: result.compactedHistory as Anthropic.MessageParam[],
      });
      context.ledger.steps++;
      // The spec's contract: on any failure, the original history (over the window when it was).
      context.ledger.check(name, lastRequest(context.server), compactForm(turns, SYSTEM), {
        sessionId: `thread-${traceId}`,
        keys: 'default',
        model: CLAUDE,
        reported: true,
        window: result.compactionApplied,
        note: `(${turns.length} messages, ${result.compactionApplied ? 'applied' : `not applied: ${result.reason}`})`,
      });
      if (!result.compactionApplied && result.compactedHistory.length !== turns.length)
        context.ledger
          .of(name)
          .violations.push(
            `not applied (${result.reason}): ${result.compactedHistory.length} messages back for a ${turns.length}-message thread, not the original`,
          );
    },
    close: async () => {},
  };
}

/** `agent-compaction compact` with a state file (one session across calls) and a report. */
function cliCompact(context: JumpContext, openai: OpenAI): JumpPath {
  const name = 'cli: compact';
  const state = join(context.dir, `state-${context.run}.json`);
  let calls = 0;
  return {
    name,
    async call(turns) {
      const input = join(context.dir, `history-${context.run}-${calls}.json`);
      const report = join(context.dir, `report-${context.run}-${calls++}.json`);
      await writeFile(input, JSON.stringify([{ role: 'system', content: SYSTEM }, ...chatForm(turns)]));
      const session = `cli-${context.run}`;
      const run = await cli([
        'compact',
        input,
        '--max-context',
        String(WINDOW),
        '--model',
        'gpt-4o',
        '--state',
        state,
        '--session-id',
        session,
        '--report',
        report,
      ]);
      if (run.code !== 0) throw new Error(`cli compact exited ${run.code}: ${run.stderr}`);
      context.ledger.countResult(name, JSON.parse(await readFile(report, 'utf8')));
      const messages = JSON.parse(run.stdout) as unknown[];
      await openai.chat.completions.create({ model: 'gpt-4o', messages: messages as never });
      context.ledger.steps++;
      context.ledger.check(name, lastRequest(context.server), compactForm(turns, SYSTEM), {
        sessionId: session,
        keys: 'default',
        note: `(${turns.length} messages)`,
      });
    },
    close: async () => {},
  };
}

/** `compactMessages` (one call, no session), its result sent with the OpenAI client. */
function compactMessagesPath(context: JumpContext, openai: OpenAI): JumpPath {
  const name = 'compactMessages';
  return {
    name,
    async call(turns) {
      const result = await compactMessages(chatForm(turns), { maxTokens: WINDOW, model: 'gpt-4o' });
      context.ledger.countResult(name, result);
      await openai.chat.completions.create({ model: 'gpt-4o', messages: result.messages as never });
      context.ledger.steps++;
      context.ledger.check(name, lastRequest(context.server), compactForm(turns), {
        note: `(${turns.length} messages)`,
      });
    },
    close: async () => {},
  };
}
