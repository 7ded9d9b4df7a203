/**
 * One agent process of the fleet tests and the fault bench: a manager with its own Redis
 * clients (session store and BullMQ queue) and an archive shared by every agent (`ARCHIVE_DIR`,
 * fs), stepping the sessions its parent names over IPC. Its summarizer writes the agent's name
 * into every summary, so two agents summarizing the same messages never write the same text
 * (as two LLM calls would not). It says it is ready once its connections are made, then
 * reports each call's result (the versioned summaries its messages carry, with their texts)
 * and the store's events; it exits on `disconnect`.
 */
import type { AnyCompactEvent } from '../../../src/core/events/events.js';
import { CompactManager } from '../../../src/core/manager/compact-manager.js';
import type { SummarizeRequest } from '../../../src/core/summary/summarizer.js';
import { bullmqPreparationQueue } from '../../../src/queue/index.js';
import { fsStorage } from '../../../src/storage/fs/index.js';
import { redisSessionStore } from '../../../src/storage/redis/index.js';
import { charCounter, chatTurns } from '../../support/background-fixtures.js';
import { reportToParent } from '../../support/report-to-parent.js';

/** What the parent asks. */
export type FleetAgentCommand =
  | { type: 'compact'; id: number; session: string; messages: number }
  | { type: 'probe'; id: number };

/** What an agent reports. */
export type FleetAgentReport =
  | { type: 'ready'; agent: string }
  | {
      type: 'result';
      agent: string;
      id: number;
      session: string;
      version: number;
      applied: boolean;
      local: boolean;
      /** Versioned summaries in the messages sent: `v` and the whole text, tags included. */
      sent: { version: number; text: string }[];
      preflightMs: number;
      fromQueue: boolean;
    }
  | { type: 'failed'; agent: string; id: number; session: string; error: string }
  | { type: 'probe'; agent: string; id: number; answered: boolean }
  | { type: 'event'; agent: string; name: string; code: string; sessionId: string };

const agent = process.env.AGENT_ID ?? String(process.pid);
const report = (message: FleetAgentReport) => reportToParent(message);
const url = process.env.REDIS_URL as string;
const keyPrefix = process.env.KEY_PREFIX ?? '';
const store = redisSessionStore({ url, keyPrefix });
const queue = bullmqPreparationQueue({
  connection: url,
  name: process.env.QUEUE_NAME as string,
  attempts: 3,
  backoffMs: 50,
});
const manager = new CompactManager({
  maxContextTokens: Number(process.env.WINDOW ?? 4_000),
  tokenCounter: charCounter,
  policy: { hardCapBuffer: 200 },
  store,
  // A short store budget: a stopped Redis costs a call half a second, then calls go local.
  storeTimeoutMs: Number(process.env.STORE_TIMEOUT_MS ?? 500),
  preparationQueue: queue,
  storage: fsStorage({ path: process.env.ARCHIVE_DIR as string }),
  summarizer: {
    name: `agent-${agent}`,
    summarize: async (request: SummarizeRequest) => {
      const ids = request.messages.map((m) => m.id);
      // The user's asks the previous summary held (`keep`) are carried, as an LLM's would be:
      // an output that loses one is rejected and the embedded summarizer runs instead.
      return {
        text: `${request.keep ?? '## Task'}\n- by agent ${agent}: ${ids.length} messages, ${ids[0]} to ${ids.at(-1)}`,
      };
    },
  },
});
manager.on('*', (event: AnyCompactEvent) => {
  const code =
    event.name === 'compact.error'
      ? event.properties.errorType
      : event.name === 'compact.warning'
        ? event.properties.code
        : undefined;
  if (code) report({ type: 'event', agent, name: event.name, code, sessionId: event.sessionId });
});

/** The histories of the sessions: the same for every agent (as one shared conversation log). */
const histories = new Map<string, unknown[]>();
function history(session: string): unknown[] {
  let messages = histories.get(session);
  if (!messages) {
    messages = chatTurns(Number(process.env.TURNS ?? 80), 100, `${session}-`);
    histories.set(session, messages);
  }
  return messages;
}

/** The versioned summaries `messages` carry. */
function versioned(messages: readonly unknown[]): { version: number; text: string }[] {
  const found: { version: number; text: string }[] = [];
  for (const message of messages) {
    const content = (message as { content?: unknown }).content;
    const text = typeof content === 'string' ? content : JSON.stringify(content ?? '');
    for (const match of text.matchAll(/<COMPACT-SUMMARY v(\d+)>[\s\S]*?<\/COMPACT-SUMMARY>/g))
      found.push({ version: Number(match[1]), text: match[0] });
  }
  return found;
}

process.on('message', async (command: FleetAgentCommand) => {
  if (command.type === 'probe') {
    const answered = await store.get('probe').then(
      () => true,
      () => false,
    );
    report({ type: 'probe', agent, id: command.id, answered });
    return;
  }
  const started = performance.now();
  try {
    const result = await manager.compact(
      command.session,
      history(command.session).slice(0, command.messages),
    );
    report({
      type: 'result',
      agent,
      id: command.id,
      session: command.session,
      version: result.version,
      applied: result.applied,
      local: result.summary?.local === true,
      sent: versioned(result.messages),
      preflightMs: performance.now() - started,
      fromQueue: result.applied && (result.summary?.summarizer.startsWith('queue:') ?? false),
    });
  } catch (error) {
    report({
      type: 'failed',
      agent,
      id: command.id,
      session: command.session,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    });
  }
});

process.on('disconnect', async () => {
  await manager.shutdown();
  await queue.close();
  await store.close();
  process.exit(0);
});

// Ready once warm: the tokenizer loaded, the store's and the queue's connections made (their
// clients' modules imported). A first call would otherwise carry the process's start-up (the
// fault bench measured 4 s for it while five processes started on two cores: its p99 was the
// first call of each agent, not a preflight's wait).
await manager.ready();
await store.get('warm-up').catch(() => undefined);
await queue.counts().catch(() => undefined);
report({ type: 'ready', agent });
