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
import { chatToLangChain, compactionMiddleware } from '../src/adapters/langchain/index.js';
import { CompactManager } from '../src/index.js';
import { syntheticSession } from '../src/testing/synthetic-session.js';

const quick = process.argv.includes('--quick');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A coding session of about `count` messages in the OpenAI Chat form, ending before a user turn. */
function chatOf(count: number): unknown[] {
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

if (import.meta.url === `file://${process.argv[1]}`)
  printLangChainMiddleware(await langChainMiddlewareBench());
