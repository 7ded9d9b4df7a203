/**
 * A small fleet on one Redis: two agent processes serve the same sessions (each step goes to
 * the other agent, as behind a load balancer) and one worker process prepares their
 * summaries on the BullMQ queue. Prints who prepared each summary: the worker (`queue:...`)
 * or an agent at its trigger.
 *
 *   npm run example:fleet                      # starts redis-server (when on PATH) on a free port
 *   REDIS_URL=redis://localhost:6379 npm run example:fleet
 *
 * Needs `npm i bullmq ioredis redis`. Agents and worker share the summary key (here a
 * generated `COMPACT_SUMMARY_KEY`): the agents adopt only what the worker signed with it.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { CompactManager } from 'agent-compaction';
import { bullmqPreparationQueue, startPreparationWorker } from 'agent-compaction/queue';
import { redisSessionStore } from 'agent-compaction/storage/redis';

const role = process.env.FLEET_ROLE;
const SESSIONS = 3;
const STEPS = 40;

/** One user/assistant turn of about 600 tokens. */
function turn(session: string, n: number): Record<string, unknown>[] {
  return [
    {
      role: 'user',
      content: `[${session}] step ${n}: ${'please look at the next part of the log. '.repeat(30)}`,
    },
    {
      role: 'assistant',
      content: `[${session}] step ${n}: ${'the part looks fine, moving on. '.repeat(30)}`,
    },
  ];
}

if (role === 'worker') {
  const url = process.env.REDIS_URL!;
  const store = redisSessionStore({ url });
  const worker = await startPreparationWorker({
    connection: url,
    store,
    onConnectionError: (message) => console.error(message),
  });
  process.send?.({ type: 'ready' });
  process.on('disconnect', () => {
    void worker
      .close()
      .then(() => store.close())
      .finally(() => process.exit(0));
  });
} else if (role === 'agent') {
  const url = process.env.REDIS_URL!;
  const queue = bullmqPreparationQueue({ connection: url });
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 16_000,
    store: redisSessionStore({ url }),
    preparationQueue: queue,
  });
  const histories = new Map<string, Record<string, unknown>[]>();
  process.on('message', async (message: { session: string; step: number }) => {
    const history = histories.get(message.session) ?? [];
    while (history.length < 2 * message.step) history.push(...turn(message.session, history.length / 2));
    histories.set(message.session, history);
    const result = await manager.compact(message.session, history);
    process.send?.({
      session: message.session,
      step: message.step,
      applied: result.applied,
      version: result.version,
      summarizer: result.summary?.summarizer,
    });
  });
  process.on('disconnect', () => {
    // shutdown() closes the store's connection; then the queue's.
    void manager
      .shutdown()
      .then(() => queue.close())
      .finally(() => process.exit(0));
  });
  process.send?.({ type: 'ready' });
} else {
  await main();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

/** A redis-server of our own (no persistence), when REDIS_URL is not set. */
async function redisUrl(): Promise<{ url: string; stop: () => void }> {
  if (process.env.REDIS_URL) return { url: process.env.REDIS_URL, stop: () => {} };
  const port = await freePort();
  const server = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', () => reject(new Error('redis-server is not on PATH: set REDIS_URL')));
    server.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) resolve();
    });
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => server.kill('SIGTERM') };
}

async function main(): Promise<void> {
  const redis = await redisUrl();
  const env = {
    ...process.env,
    REDIS_URL: redis.url,
    COMPACT_SUMMARY_KEY: process.env.COMPACT_SUMMARY_KEY ?? randomBytes(32).toString('base64url'),
  };
  const start = (name: string) =>
    new Promise<ChildProcess>((resolve) => {
      const child = fork(new URL(import.meta.url).pathname, [], {
        execArgv: process.execArgv,
        env: { ...env, FLEET_ROLE: name },
      });
      child.once('message', () => resolve(child));
    });
  const [worker, ...agents] = await Promise.all([start('worker'), start('agent'), start('agent')]);
  console.log(`fleet on ${redis.url}: 2 agents, 1 worker, ${SESSIONS} sessions x ${STEPS} steps`);
  const ask = (agent: ChildProcess, session: string, step: number) =>
    new Promise<{ applied: boolean; version: number; summarizer?: string }>((resolve) => {
      const listener = (answer: { session: string; step: number }) => {
        if (answer.session !== session || answer.step !== step) return;
        agent.off('message', listener);
        resolve(answer as never);
      };
      agent.on('message', listener);
      agent.send({ session, step });
    });
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, s) => {
      const session = `session-${s + 1}`;
      for (let step = 1; step <= STEPS; step++) {
        const agentIndex = step % agents.length;
        const result = await ask(agents[agentIndex]!, session, step);
        if (result.applied && result.summarizer) {
          const who = result.summarizer.startsWith('queue:')
            ? `the worker (${result.summarizer})`
            : `agent ${agentIndex + 1} at its trigger (${result.summarizer})`;
          console.log(`${session} step ${step}: summary v${result.version} prepared by ${who}`);
        }
        // The model call between two steps.
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }),
  );
  for (const child of [worker!, ...agents]) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    await exited;
  }
  redis.stop();
  console.log('done: every process exited');
}
