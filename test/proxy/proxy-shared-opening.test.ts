/**
 * Conversations that open with the same first message (a canned one) share one fingerprint,
 * through one proxy without a session header. The session's state followed whichever called
 * last (the core resumes up to 4 earlier branches): six 25-step loops alternating summarized
 * 55 times in 150 calls, against 13 one after the other (each a paid call with an LLM
 * summarizer). Now each keeps a session of its own once two of them alternate, and alternating
 * costs no more summaries than one after the other. One conversation stays in one session as it
 * grows, is compacted, moves its Anthropic cache marks, resends an earlier turn or edits one.
 * Real HTTP on loopback, a bare upstream.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProxyLogEntry, type RunningProxy, startProxy } from '../../src/proxy/index.js';
import { toolOutput } from '../support/tool-loop.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const STEPS = 25;
const LOOPS = ['A', 'B', 'C', 'D', 'E', 'F'];

async function bareUpstream(bodies: string[]): Promise<string> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      bodies.push(body);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}');
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function proxy() {
  const logs: ProxyLogEntry[] = [];
  const bodies: string[] = [];
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
  let summaries = 0;
  // A summary made: with an LLM summarizer, a paid call.
  manager.on('compact.summary_created', () => summaries++);
  const running = await startProxy({
    upstream: await bareUpstream(bodies),
    manager,
    port: 0,
    log: (entry) => logs.push(entry),
  });
  cleanups.push(() => running.close({ graceMs: 1000 }));
  return { proxy: running, logs, bodies, summaries: () => summaries };
}

type Message = Record<string, unknown>;

/**
 * The Chat Completions history of `loop` after `step` steps: the same first message and the
 * same first tool call for every loop; the tool's outputs differ from the first on.
 */
function chatHistory(loop: string, step: number): Message[] {
  const messages: Message[] = [{ role: 'user', content: 'Check the fleet and report.' }];
  for (let s = 0; s < step; s++) {
    const call = { id: `call_${s}`, type: 'function', function: { name: 'probe', arguments: `{"n":${s}}` } };
    messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    messages.push({
      role: 'tool',
      tool_call_id: `call_${s}`,
      content: toolOutput(s)
        .split('\n')
        .map((line) => `LOOP-${loop} ${line}`)
        .join('\n'),
    });
  }
  return messages;
}

/** The Anthropic history of one loop, its newest message marked for the cache (as clients do). */
function anthropicHistory(step: number): Message[] {
  const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'Check the fleet.' }] }];
  for (let s = 0; s < step; s++) {
    messages.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `tu_${s}`, name: 'probe', input: { n: s } }],
    });
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `tu_${s}`, content: toolOutput(s) }],
    });
  }
  const last = messages.at(-1)!.content as Message[];
  last[last.length - 1] = { ...last.at(-1)!, cache_control: { type: 'ephemeral' } };
  return messages;
}

async function send(
  running: RunningProxy,
  path: string,
  body: Message,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${running.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer test', ...headers },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  await response.arrayBuffer();
}

const chat = (running: RunningProxy, loop: string, step: number) =>
  send(running, '/v1/chat/completions', { model: 'gpt-4o', messages: chatHistory(loop, step) });

/** Calls of `logs` that compacted (a summary or a pruning changed what was sent). */
const compactions = (logs: ProxyLogEntry[]) => logs.filter((entry) => entry.applied === true).length;
/** Milliseconds `logs` spent compacting. */
const compactMs = (logs: ProxyLogEntry[]) =>
  Math.round(logs.reduce((sum, entry) => sum + (entry.compactMs ?? 0), 0));

describe('two conversations with the same first message', () => {
  it('alternating, summarize no more often than one after the other, and never mix', async () => {
    const sequential = await proxy();
    for (const loop of LOOPS)
      for (let step = 0; step < STEPS; step++) await chat(sequential.proxy, loop, step);
    const alternating = await proxy();
    for (let step = 0; step < STEPS; step++)
      for (const loop of LOOPS) await chat(alternating.proxy, loop, step);
    const figure = (run: typeof sequential) => ({
      summaries: run.summaries(),
      applied: compactions(run.logs),
      compactMs: compactMs(run.logs),
    });
    const figures = { sequential: figure(sequential), alternating: figure(alternating) };
    console.log(`${LOOPS.length} loops, ${LOOPS.length * STEPS} calls: ${JSON.stringify(figures)}`);
    expect(figures.sequential.summaries).toBeGreaterThan(0);
    expect(figures.alternating.summaries).toBeLessThanOrEqual(figures.sequential.summaries);
    // Nothing of one loop reached the upstream in another's requests.
    for (const [i, body] of alternating.bodies.entries()) {
      const own = LOOPS[i % LOOPS.length]!;
      for (const other of LOOPS) if (other !== own) expect(body.includes(`LOOP-${other} `)).toBe(false);
    }
    // Each loop ends in a session of its own.
    const last = alternating.logs.slice(-LOOPS.length).map((entry) => entry.session);
    expect(new Set(last).size).toBe(LOOPS.length);
  });

  it('named by the header, stay in the header sessions', async () => {
    const running = await proxy();
    for (let step = 0; step < 4; step++)
      for (const loop of ['A', 'B'])
        await send(
          running.proxy,
          '/v1/chat/completions',
          { model: 'gpt-4o', messages: chatHistory(loop, step) },
          { 'x-compaction-session': `s-${loop}` },
        );
    expect(running.logs.map((entry) => entry.session)).toEqual(
      Array.from({ length: 8 }, (_, i) => `s-${i % 2 === 0 ? 'A' : 'B'}`),
    );
  });
});

describe('one conversation', () => {
  it('stays in one session as it grows and is compacted (Anthropic, cache marks moving)', async () => {
    const running = await proxy();
    for (let step = 0; step < STEPS; step++)
      await send(
        running.proxy,
        '/v1/messages',
        { model: 'claude-sonnet-4-5', max_tokens: 1024, messages: anthropicHistory(step) },
        { 'anthropic-version': '2023-06-01' },
      );
    expect(compactions(running.logs)).toBeGreaterThan(0);
    expect(new Set(running.logs.map((entry) => entry.session)).size).toBe(1);
  });

  it('stays in one session when a call is sent again (a retry) or an earlier turn is resent', async () => {
    const running = await proxy();
    for (const step of [0, 1, 2, 3, 3, 4, 5, 2, 6]) await chat(running.proxy, 'A', step);
    expect(new Set(running.logs.map((entry) => entry.session)).size).toBe(1);
  });

  it('stays in one session when a turn is edited (a rewind), then goes on', async () => {
    const running = await proxy();
    for (let step = 0; step < STEPS; step++) {
      const messages = chatHistory('A', step);
      // From step 12 on, the tool's answer of step 3 reads differently (edited in place).
      if (step >= 12) messages[8] = { ...messages[8]!, content: 'edited' };
      await send(running.proxy, '/v1/chat/completions', { model: 'gpt-4o', messages });
    }
    expect(compactions(running.logs)).toBeGreaterThan(0);
    expect(new Set(running.logs.map((entry) => entry.session)).size).toBe(1);
  });
});
