/**
 * `npx tsx bench/langchain-middleware.ts [--quick]`: the LangChain.js middleware's own work per
 * model call (issue 38 point 3), at 1k / 4k / 16k messages: `wrapModelCall` with a handler that
 * answers at once (no model, no SDK), beside the preflight alone on the same history in the
 * OpenAI Chat form (what the manager costs without the conversions). The history grows by one
 * message per call, as an agent's state does; median per call. Target: the middleware's cost
 * stays flat with the history (within 1.5x of 1k at 16k).
 */
import * as classes from '@langchain/core/messages';
import type { ModelRequest } from 'langchain';
import { ConversationChat } from '../src/adapters/langchain/conversation-chat.js';
import { chatToLangChain, compactionMiddleware } from '../src/adapters/langchain/index.js';
import { CompactManager, MemorySessionStore } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

const quick = process.argv.includes('--quick');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A coding session of about `count` messages in the OpenAI Chat form, ending before a user turn. */
export function chatOf(count: number): unknown[] {
  const out: unknown[] = [];
  for (let part = 0; out.length < count; part++) {
    const chunk = syntheticSession({ turns: 200, seed: 7 + part, toolDensity: 3, resultChars: 300 });
    out.push(...(part === 0 ? chunk : chunk.filter((m) => m.role !== 'system' && m.role !== 'developer')));
  }
  let end = count;
  while (end > 1 && (out[end] as { role?: string }).role !== 'user') end--;
  return out.slice(0, end).filter((m) => (m as { role?: string }).role !== 'system');
}

export interface MiddlewareRow {
  messages: number;
  middlewareMs: number;
  preflightMs: number;
}

async function measure(size: number, calls: number): Promise<MiddlewareRow> {
  const chat = chatOf(size);
  const state = chatToLangChain(chat, classes);
  const middleware = compactionMiddleware(
    new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 }),
    {
      sessionId: 'bench',
    },
  );
  const reply = new classes.AIMessage('ok');
  const handler = async () => reply;
  const call = (messages: classes.BaseMessage[]) =>
    middleware.wrapModelCall!(
      { messages, tools: [], runtime: {} } as unknown as ModelRequest,
      handler as never,
    );
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
  const grown = [...chat];
  await call(state);
  await manager.compact('bench', grown);
  const middlewareTimes: number[] = [];
  const preflightTimes: number[] = [];
  for (let i = 0; i < calls; i++) {
    const text = `follow-up ${i}: run the tests again`;
    state.push(new classes.HumanMessage(text));
    grown.push({ role: 'user', content: text });
    let t = performance.now();
    await call(state);
    middlewareTimes.push(performance.now() - t);
    t = performance.now();
    await manager.preflight('bench', grown);
    preflightTimes.push(performance.now() - t);
    // The rest of the model call (the provider's answer arrives in a later turn of the loop).
    await new Promise((resolve) => setImmediate(resolve));
  }
  return {
    messages: state.length,
    middlewareMs: median(middlewareTimes),
    preflightMs: median(preflightTimes),
  };
}

export async function langChainMiddlewareBench(): Promise<MiddlewareRow[]> {
  await measure(500, 40); // compiles the hot paths first
  const rows: MiddlewareRow[] = [];
  for (const size of quick ? [1_000, 4_000] : [1_000, 4_000, 16_000]) rows.push(await measure(size, 100));
  return rows;
}

export function printLangChainMiddleware(rows: readonly MiddlewareRow[]): void {
  console.log('LangChain.js middleware per model call (wrapModelCall, handler answers at once), median:');
  const base = rows[0]!.middlewareMs;
  for (const row of rows) {
    const ratio = row.middlewareMs / base;
    console.log(
      `  ${row.messages.toLocaleString('en').padStart(7)} messages: middleware ${row.middlewareMs.toFixed(3)} ms, preflight alone ${row.preflightMs.toFixed(3)} ms; vs 1k ${ratio.toFixed(2)}x  target <= 1.5x (${ratio <= 1.5 ? 'met' : 'MISSED'})`,
    );
  }
}

/**
 * The longest gap between two turns of the event loop while `work` runs (and `after` runs,
 * untimed: the work a call leaves for after it), its wall time and the process's CPU time.
 */
async function longestBlock(
  work: () => Promise<unknown>,
  after?: () => Promise<unknown>,
): Promise<{ wall: number; block: number; cpu: number }> {
  let last = performance.now();
  let block = 0;
  let running = true;
  const tick = () => {
    const now = performance.now();
    block = Math.max(block, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  const t = performance.now();
  const cpuBefore = process.cpuUsage();
  last = t;
  await work();
  const wall = performance.now() - t;
  const used = process.cpuUsage(cpuBefore);
  await after?.();
  running = false;
  block = Math.max(block, performance.now() - last);
  return { wall, block, cpu: (used.user + used.system) / 1000 };
}

export interface FirstCallRow {
  messages: number;
  /** A fresh middleware and manager on a session the store knows (its counts stored). */
  known: { wall: number; block: number; cpu: number };
  /** The same session, the counts record deleted (decided from a bound, counted after the call). */
  recount: { wall: number; block: number; cpu: number };
  /** A warm call of the middleware at this size (median of 20, one message appended each). */
  warm: { wall: number; cpu: number };
  /** Converting the messages at once (the old first call) against in slices. */
  convertAtOnce: number;
  convertSliced: number;
}

/** Issue 47: the middleware's first call on a known session of `size` messages (a new process). */
export async function langChainFirstCall(size: number): Promise<FirstCallRow> {
  const chat = chatOf(size);
  const store = new MemorySessionStore();
  const options = { model: 'gpt-4o', maxContextTokens: 2_000_000_000, store } as const;
  const reply = new classes.AIMessage('ok');
  // The session served by the middleware in an earlier process.
  const served = new CompactManager(options);
  await served.ready();
  await compactionMiddleware(served, { sessionId: 'bench' }).wrapModelCall!(
    { messages: chatToLangChain(chat, classes), tools: [], runtime: {} } as unknown as ModelRequest,
    (async () => reply) as never,
  );
  await served.shutdown();
  const fresh = async () => {
    const manager = new CompactManager(options);
    await manager.ready();
    const middleware = compactionMiddleware(manager, { sessionId: 'bench' });
    const state = chatToLangChain(JSON.parse(JSON.stringify(chat)), classes);
    const call = async () =>
      middleware.wrapModelCall!(
        { messages: state, tools: [], runtime: {} } as unknown as ModelRequest,
        (async () => reply) as never,
      );
    const figures = await longestBlock(call, () => manager.flush());
    const walls: number[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < 20; i++) {
      state.push(new classes.HumanMessage(`follow-up ${i}`));
      const t = performance.now();
      const cpuBefore = process.cpuUsage();
      await call();
      walls.push(performance.now() - t);
      const used = process.cpuUsage(cpuBefore);
      cpus.push((used.user + used.system) / 1000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await manager.shutdown();
    return { ...figures, warm: { wall: median(walls), cpu: median(cpus) } };
  };
  const { warm, ...known } = await fresh();
  await store.delete('bench::counts');
  await store.delete('bench::quick');
  const { warm: _, ...recount } = await fresh();
  const state = chatToLangChain(chat, classes);
  const atOnce = await longestBlock(async () => new ConversationChat().toChat(state));
  const sliced = await longestBlock(() => new ConversationChat().toChatInSlices(state));
  return {
    messages: size,
    known,
    recount,
    warm,
    convertAtOnce: atOnce.block,
    convertSliced: sliced.block,
  };
}

export function printLangChainFirstCall(row: FirstCallRow): void {
  const f = (value: number) => `${value.toFixed(1)} ms`;
  const ratio = row.known.wall / row.warm.wall;
  console.log(
    `LangChain.js middleware, first call of a fresh process on a known ${row.messages.toLocaleString('en')}-message session: ${f(row.known.wall)} (CPU ${f(row.known.cpu)}; ${ratio.toFixed(0)}x a warm call's ${row.warm.wall.toFixed(3)} ms, CPU ${(row.known.cpu / row.warm.cpu).toFixed(0)}x, target <= 10x: ${ratio <= 10 ? 'met' : 'MISSED'}; longest block ${f(row.known.block)}); counts not stored ${f(row.recount.wall)} (CPU ${f(row.recount.cpu)}; block ${f(row.recount.block)}); converting the messages at once blocks ${f(row.convertAtOnce)}, in slices ${f(row.convertSliced)}`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (!process.argv.includes('--first-only')) printLangChainMiddleware(await langChainMiddlewareBench());
  printLangChainFirstCall(await langChainFirstCall(quick ? 4_000 : 16_000));
}
