/**
 * `npx tsx bench/cold-process.ts [--dist dist] [--runs 5] [--size 16000] [--plain] [--settle]`: the first
 * call of a real fresh process (issue 47 point 1) on a known session that compacted (`--plain`:
 * one that did not), against a warm call in the same process. bench/cold-start.ts takes a fresh
 * manager in a process that already ran the same code; here each child is a new `node` on the
 * built package (`npm run build` first, or `--dist` another build), so its first call also pays
 * V8's lazy compilation of every function on the path, which no fresh manager shows.
 *
 * The child is bench/cold-process-child.mjs. The parent builds the session with a warm
 * manager, its store's records written to a folder as JSON (what a fresh process reads from
 * its database), and the history beside them. Each
 * child, in turn: imports the package, `ready()`, reads the history, times its first call (wall
 * and CPU), checks that it sent exactly what the warm manager sent, waits for the work left
 * after it, then a second fresh manager's first call in the same process (the in-process
 * figure) and 30 warm calls (one message appended, a loop turn between). Medians over the
 * children.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;
const digest = (messages: unknown) => createHash('sha256').update(JSON.stringify(messages)).digest('hex');
const fileOf = (folder: string, key: string) => join(folder, `${encodeURIComponent(key)}.json`);
const CHILD = fileURLToPath(new URL('./cold-process-child.mjs', import.meta.url));
const ask = (n: number) => ({ role: 'user', content: `follow-up ${n}: run the tests again` });

interface Setup {
  folder: string;
  history: string;
  options: { model: string; maxContextTokens: number };
  expected: string;
  sent: number;
}

type Package = typeof import('../src/index.js');
const load = async (dist: string) => (await import(pathToFileURL(join(dist, 'index.js')).href)) as Package;

function sessionOf(
  syntheticSession: Package extends never ? never : (o: object) => unknown[],
  count: number,
) {
  const messages: unknown[] = [];
  for (let part = 0; messages.length < count; part++) {
    const chunk = syntheticSession({ turns: 200, seed: 3 + part, toolDensity: 3, resultChars: 3_300 }) as {
      role: string;
    }[];
    messages.push(
      ...(part === 0 ? chunk : chunk.filter((m) => m.role !== 'system' && m.role !== 'developer')),
    );
  }
  let end = count;
  while (end > 1 && (messages[end] as { role?: string }).role !== 'user') end--;
  return messages.slice(0, end);
}

async function parent(
  dist: string,
  runs: number,
  size: number,
  plain: boolean,
  langchain = false,
): Promise<void> {
  const { CompactManager, MemorySessionStore } = await load(dist);
  const { syntheticSession } = (await import(
    pathToFileURL(join(dist, 'testing/synthetic-session.js')).href
  )) as {
    syntheticSession: (o: object) => unknown[];
  };
  const folder = mkdtempSync(join(tmpdir(), 'cold-process-'));
  const options = { model: 'gpt-4o', maxContextTokens: plain || langchain ? 2_000_000_000 : 400_000 };
  // A store outside the process (JSON text per key, locks from an in-process store): the
  // manager writes to it what a database holds (a build that packs long states, packed).
  const locks = new MemorySessionStore();
  const texts = new Map<string, string>();
  const store = {
    name: 'outside',
    get: async (key: string) => {
      const text = texts.get(key);
      return text === undefined ? undefined : JSON.parse(text);
    },
    set: async (key: string, state: object, options: { expectedVersion?: number } = {}) => {
      const text = texts.get(key);
      const version = text === undefined ? 0 : (JSON.parse(text) as { version: number }).version;
      if (options.expectedVersion !== undefined && version !== options.expectedVersion) return false;
      texts.set(key, JSON.stringify(state));
      return true;
    },
    delete: async (key: string) => {
      texts.delete(key);
    },
    acquireLock: (key: string, ttl: number) => locks.acquireLock(key, ttl),
  } as unknown as InstanceType<Package['MemorySessionStore']>;
  const history = sessionOf(syntheticSession, size);
  const manager = new CompactManager({ ...options, store });
  await manager.ready();
  if (langchain) return langChainParent(dist, runs, { folder, options, store, manager, history });
  const compacted = (await manager.compact('c', history)).applied;
  if (compacted === plain)
    throw new Error(plain ? 'the plain session compacted' : 'the session did not compact');
  await manager.flush();
  for (let i = 0; i < 30; i++) {
    history.push(ask(i));
    if ((await manager.compact('c', history)).applied) throw new Error('compacted again');
    await new Promise((resolve) => setImmediate(resolve));
  }
  await manager.flush();
  history.push(ask(30));
  // What a warm manager sends for the history the children get (its record may move on: the
  // children read the records as they were before this call).
  mkdirSync(folder, { recursive: true });
  for (const key of ['c', 'c::quick', 'c::counts']) {
    const state = await store.get(key);
    if (state) writeFileSync(fileOf(folder, key), JSON.stringify(state));
  }
  const warmResult = await manager.compact('c', history);
  await manager.shutdown();
  const historyFile = join(folder, 'history.json');
  writeFileSync(historyFile, JSON.stringify(history));
  const setup: Setup = {
    folder,
    history: historyFile,
    options,
    expected: digest(warmResult.messages),
    sent: warmResult.messages.length,
  };
  writeFileSync(join(folder, 'setup.json'), JSON.stringify(setup));
  const rows: Record<string, number | boolean>[] = [];
  for (let i = 0; i < runs; i++) {
    // Plain node on the built package: no TypeScript loader in the child's module loads.
    // --settle: a full collection after the child's history parse (its garbage is the caller's).
    const settle = process.argv.includes('--settle');
    const out = spawnSync(
      process.execPath,
      [...(settle ? ['--expose-gc'] : []), CHILD, join(folder, 'setup.json'), dist],
      { encoding: 'utf8', env: settle ? { ...process.env, COLD_GC: '1' } : process.env },
    );
    const line = out.stdout.trim().split('\n').at(-1);
    if (out.status !== 0 || !line) throw new Error(`child failed: ${out.stderr}`);
    rows.push(JSON.parse(line));
  }
  // --keep: the folder stays, to run a child by hand (`node --cpu-prof bench/cold-process-child.mjs <setup.json> <dist>`).
  if (process.argv.includes('--keep')) console.log(`setup kept: ${join(folder, 'setup.json')}`);
  else rmSync(folder, { recursive: true, force: true });
  const m = (field: string) => median(rows.map((row) => row[field] as number));
  const f = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
  console.log(
    `fresh process, ${plain ? 'plain' : 'compacted'} session of ${history.length.toLocaleString('en')} messages (request of ${setup.sent.toLocaleString('en')}), median of ${runs} processes (${dist}):`,
  );
  console.log(
    `  process start to script ${f(m('start'))}, import ${f(m('imported'))}, ready() ${f(m('ready'))}, history read ${f(m('read'))}`,
  );
  console.log(
    `  first call ${f(m('firstMs'))} (CPU ${f(m('firstCpu'))}); a second fresh manager ${f(m('secondMs'))} (CPU ${f(m('secondCpu'))}); warm ${f(m('warm'))} (CPU ${f(m('warmCpu'))})`,
  );
  console.log(
    `  main thread's CPU (schedstat: no GC helper threads, no sweeping left by the history's parse): first call ${f(m('firstThread'))}, second fresh manager ${f(m('secondThread'))}, warm ${f(m('warmThread'))}: first / warm ${(m('firstThread') / m('warmThread')).toFixed(1)}x; ready()'s longest turn ${f(m('readyBlock'))} (main-thread CPU)`,
  );
  const majors = rows.filter((row) => row.firstMajor).length;
  console.log(
    `  collector's pauses in the first call ${f(m('firstGc'))} (a major collection in ${majors} of ${runs}); first call CPU less them ${f(median(rows.map((row) => (row.firstCpu as number) - (row.firstGc as number))))}`,
  );
  console.log(
    `  first / warm ${(m('firstMs') / m('warm')).toFixed(1)}x (CPU ${(m('firstCpu') / m('warmCpu')).toFixed(1)}x); second fresh / warm ${(m('secondMs') / m('warm')).toFixed(1)}x (CPU ${(m('secondCpu') / m('warmCpu')).toFixed(1)}x); sent what the warm manager sent: ${rows.every((row) => row.same) ? 'yes' : 'NO'}`,
  );
}

/**
 * `--langchain`: the same for the LangChain.js middleware (a plain session served by it, the
 * children's first `wrapModelCall` on the history as LangChain messages, converted before the
 * clock starts, as an agent's state holds them).
 */
async function langChainParent(
  dist: string,
  runs: number,
  served: {
    folder: string;
    options: object;
    store: InstanceType<Package['MemorySessionStore']>;
    manager: InstanceType<Package['CompactManager']>;
    history: unknown[];
  },
): Promise<void> {
  const { folder, options, store, manager, history } = served;
  const classes = await import('@langchain/core/messages');
  const { chatToLangChain, compactionMiddleware } = (await import(
    pathToFileURL(join(dist, 'adapters/langchain/index.js')).href
  )) as typeof import('../src/adapters/langchain/index.js');
  const chat = history.filter((m) => (m as { role?: string }).role !== 'system');
  const middleware = compactionMiddleware(manager, { sessionId: 'c' });
  let seen: unknown[] = [];
  const handler = async (request: { messages: unknown[] }) => {
    seen = request.messages;
    return new classes.AIMessage('ok');
  };
  const state = chatToLangChain(chat, classes);
  const call = () =>
    middleware.wrapModelCall!({ messages: state, tools: [], runtime: {} } as never, handler as never);
  await call();
  await manager.flush();
  for (let i = 0; i < 30; i++) {
    chat.push(ask(i));
    state.push(new classes.HumanMessage(ask(i).content));
    await call();
    await new Promise((resolve) => setImmediate(resolve));
  }
  await manager.flush();
  chat.push(ask(30));
  state.push(new classes.HumanMessage(ask(30).content));
  mkdirSync(folder, { recursive: true });
  for (const key of ['c', 'c::quick', 'c::counts']) {
    const stored = await store.get(key);
    if (stored) writeFileSync(fileOf(folder, key), JSON.stringify(stored));
  }
  await call();
  await manager.shutdown();
  const historyFile = join(folder, 'history.json');
  writeFileSync(historyFile, JSON.stringify(chat));
  const expected = digest((seen as { content: unknown }[]).map((m) => m.content));
  const setupFile = join(folder, 'setup.json');
  writeFileSync(
    setupFile,
    JSON.stringify({ folder, history: historyFile, options, expected, sent: seen.length, langchain: true }),
  );
  const rows: Record<string, number | boolean>[] = [];
  for (let i = 0; i < runs; i++) {
    const out = spawnSync(process.execPath, [CHILD, setupFile, dist], { encoding: 'utf8' });
    const line = out.stdout.trim().split('\n').at(-1);
    if (out.status !== 0 || !line) throw new Error(`child failed: ${out.stderr}`);
    rows.push(JSON.parse(line));
  }
  if (process.argv.includes('--keep')) console.log(`setup kept: ${setupFile}`);
  else rmSync(folder, { recursive: true, force: true });
  const m = (field: string) => median(rows.map((row) => row[field] as number));
  const f = (value: number) => `${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
  console.log(
    `fresh process, LangChain.js middleware, plain session of ${chat.length.toLocaleString('en')} messages, median of ${runs} processes (${dist}):`,
  );
  console.log(
    `  first call ${f(m('firstMs'))} (CPU ${f(m('firstCpu'))}, main thread ${f(m('firstThread'))}); warm ${f(m('warm'))} (CPU ${f(m('warmCpu'))}, main thread ${f(m('warmThread'))})`,
  );
  console.log(
    `  first / warm ${(m('firstMs') / m('warm')).toFixed(1)}x (main-thread CPU ${(m('firstThread') / m('warmThread')).toFixed(1)}x); ready()'s longest turn ${f(m('readyBlock'))}; sent what the warm middleware sent: ${rows.every((row) => row.same) ? 'yes' : 'NO'}`,
  );
}

const argv = process.argv;
const arg = (name: string, fallback: string) => {
  const at = argv.indexOf(name);
  return at > 0 && argv[at + 1] !== undefined ? argv[at + 1]! : fallback;
};
const dist = resolve(arg('--dist', 'dist'));
await parent(
  dist,
  Number(arg('--runs', '5')),
  Number(arg('--size', '16000')),
  argv.includes('--plain'),
  argv.includes('--langchain'),
);
