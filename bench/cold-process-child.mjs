/**
 * One fresh process of bench/cold-process.ts: `node bench/cold-process-child.mjs <setup.json>
 * <dist>`, plain node on the built package. Prints one JSON line of figures.
 */
import { createHash } from 'node:crypto';
import { openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const start = performance.now(); // since the process started (performance.timeOrigin)
const [setupFile, dist] = process.argv.slice(2);
const setup = JSON.parse(readFileSync(setupFile, 'utf8'));
const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;
const cpuMs = (from) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};
/** The main thread's CPU time in ms (Linux schedstat; the process's, helper threads included, elsewhere). */
const threadMs = (() => {
  let fd;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
  } catch {
    return () => cpuMs();
  }
  const buffer = Buffer.alloc(128);
  return () => {
    const text = buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0));
    return Number(text.slice(0, text.indexOf(' '))) / 1e6;
  };
})();
const digest = (messages) => createHash('sha256').update(JSON.stringify(messages)).digest('hex');
const fileOf = (key) => join(setup.folder, `${encodeURIComponent(key)}.json`);

/**
 * A store read from the folder of JSON files (one per key), written in memory: a database's
 * fresh read. Its `getIfChanged` (used by builds that know it) names a file's revision by its
 * stat, and a key written since by a count of the writes.
 */
function folderStore(memory) {
  const written = new Map();
  return {
    name: 'json-folder',
    async get(key) {
      if (written.has(key)) return memory.get(key);
      try {
        return JSON.parse(await readFile(fileOf(key), 'utf8'));
      } catch {
        return undefined;
      }
    },
    async getIfChanged(key, revision) {
      let now = written.has(key) ? `w${written.get(key)}` : undefined;
      if (now === undefined) {
        const info = await stat(fileOf(key)).catch(() => undefined);
        now = info ? `${info.mtimeMs}:${info.size}:${info.ino}` : 'none';
      }
      if (now === revision) return { revision: now, unchanged: true };
      const state = await this.get(key);
      return state === undefined ? { revision: now } : { revision: now, state };
    },
    async set(key, state, options) {
      const done = await memory.set(key, state, options);
      if (done) written.set(key, (written.get(key) ?? 0) + 1);
      return done;
    },
    async delete(key) {
      written.set(key, (written.get(key) ?? 0) + 1);
      await memory.delete(key);
    },
    acquireLock: (key, ttl) => memory.acquireLock(key, ttl),
  };
}

/** The middleware's calls on the history as LangChain messages (converted here, before any clock). */
async function langChainCalls(chat) {
  const classes = await import('@langchain/core/messages');
  const { chatToLangChain, compactionMiddleware } = await import(
    pathToFileURL(join(dist, 'adapters/langchain/index.js')).href
  );
  const state = chatToLangChain(chat, classes);
  const middleware = compactionMiddleware(manager, { sessionId: 'c' });
  const reply = new classes.AIMessage('ok');
  return {
    async call() {
      let seen = [];
      await middleware.wrapModelCall({ messages: state, tools: [], runtime: {} }, async (request) => {
        seen = request.messages;
        return reply;
      });
      return { messages: seen };
    },
    push: (text) => state.push(new classes.HumanMessage(text)),
  };
}

const loaded = performance.now();
const { CompactManager, MemorySessionStore } = await import(pathToFileURL(join(dist, 'index.js')).href);
const imported = performance.now();
/** COLD_REDIS=<url>: the records loaded into a Redis store (a key prefix of this child's own), used instead. */
async function redisStore(url) {
  const { redisSessionStore } = await import(pathToFileURL(join(dist, 'storage/redis/index.js')).href);
  const store = redisSessionStore({ url, keyPrefix: `cold-process:${process.pid}:${Date.now()}:` });
  for (const key of ['c', 'c::quick', 'c::counts']) {
    const text = await readFile(fileOf(key), 'utf8').catch(() => undefined);
    if (text !== undefined) await store.set(key, JSON.parse(text));
  }
  return store;
}
const store = process.env.COLD_REDIS
  ? await redisStore(process.env.COLD_REDIS)
  : folderStore(new MemorySessionStore());
const manager = new CompactManager({ ...setup.options, store });
// ready()'s longest turn: the most main-thread CPU between two turns of the loop.
let readyBlock = 0;
let turnCpu = threadMs();
let readying = true;
const turn = () => {
  const now = threadMs();
  readyBlock = Math.max(readyBlock, now - turnCpu);
  turnCpu = threadMs();
  if (readying) setImmediate(turn);
};
setImmediate(turn);
await manager.ready();
readying = false;
turn();
const ready = performance.now();
const history = JSON.parse(await readFile(setup.history, 'utf8'));
// A LangChain setup: the history as an agent's state holds it (LangChain messages), and the
// middleware's call in place of the manager's.
const langchain = setup.langchain ? await langChainCalls(history) : undefined;
// COLD_GC=1 (with `node --expose-gc`): a full collection after the history's parse, so that the
// first call does not pay for the parse's garbage (see the pauses below).
if (process.env.COLD_GC) globalThis.gc();
const read = performance.now();

// COLD_PROFILE=<file>: a CPU profile of the first call alone (100 us samples).
const profiling = process.env.COLD_PROFILE && new (await import('node:inspector/promises')).Session();
if (profiling) {
  profiling.connect();
  await profiling.post('Profiler.enable');
  await profiling.post('Profiler.setSamplingInterval', { interval: 100 });
  await profiling.post('Profiler.start');
}
// The collector's pauses on this thread during the first call (a major collection after the
// history's parse lands there or not by the heap's thresholds: a lottery between builds).
const pauses = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    pauses.push({ at: entry.startTime, ms: entry.duration, kind: entry.detail?.kind });
});
observer.observe({ entryTypes: ['gc'] });
const cpu = process.cpuUsage();
const thread = threadMs();
const first = langchain ? await langchain.call() : await manager.compact('c', history);
const firstThread = threadMs() - thread;
const firstMs = performance.now() - read;
const firstEnd = performance.now();
const firstCpu = cpuMs(cpu);
if (profiling) {
  const { profile } = await profiling.post('Profiler.stop');
  writeFileSync(process.env.COLD_PROFILE, JSON.stringify(profile));
}
await new Promise((resolve) => setTimeout(resolve, 20)); // the observer's entries arrive later
observer.disconnect();
const inFirst = pauses.filter((pause) => pause.at >= read && pause.at <= firstEnd);
const firstGc = inFirst.reduce((sum, pause) => sum + pause.ms, 0);
const firstMajor = inFirst.some((pause) => pause.kind === 4); // NODE_PERFORMANCE_GC_MAJOR
const same = digest(langchain ? first.messages.map((m) => m.content) : first.messages) === setup.expected;
await manager.flush();
// A second fresh manager in this process: the code is compiled now (bench/cold-start.ts's figure).
const again = new CompactManager({ ...setup.options, store });

await again.ready();
const copy = JSON.parse(JSON.stringify(history));
const t = performance.now();
const cpu2 = process.cpuUsage();
const thread2 = threadMs();
const second = langchain ? first : await again.compact('c', copy);
const secondThread = threadMs() - thread2;
const secondMs = performance.now() - t;
const secondCpu = cpuMs(cpu2);
const secondSame = langchain ? true : digest(second.messages) === setup.expected;
await again.flush();
await again.shutdown();
const warm = [];
const warmCpu = [];
const warmThread = [];
for (let i = 0; i < 30; i++) {
  history.push({ role: 'user', content: `follow-up ${1_000 + i}: run the tests again` });
  langchain?.push(`follow-up ${1_000 + i}: run the tests again`);
  const w = performance.now();
  const c = process.cpuUsage();
  const t = threadMs();
  await (langchain ? langchain.call() : manager.compact('c', history));
  warm.push(performance.now() - w);
  warmCpu.push(cpuMs(c));
  warmThread.push(threadMs() - t);
  await new Promise((resolve) => setImmediate(resolve));
}
await manager.shutdown();
const row = {
  start,
  imported: imported - loaded,
  ready: ready - imported,
  read: read - ready,
  firstMs,
  firstCpu,
  firstGc,
  firstMajor,
  same: same && secondSame,
  sent: first.messages.length,
  secondMs,
  secondCpu,
  warm: median(warm),
  warmCpu: median(warmCpu),
  firstThread,
  secondThread,
  warmThread: median(warmThread),
  readyBlock,
};
process.stdout.write(`${JSON.stringify(row)}\n`);
