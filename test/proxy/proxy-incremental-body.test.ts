/**
 * Reading a body from what is new changes nothing the upstream receives. Two proxies stand in
 * front of one loopback provider, one reading every body whole (`reuseBytes: 0`), one reading
 * from what is new; the official SDKs send each the same calls: messages appended, a field in
 * front of the conversation changed (`temperature`, `model`, the system prompt, `stream`), a
 * message in the middle edited, non-ASCII and escaped text, a history the manager compacts. The
 * provider receives the same bytes from both, call for call.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProxyLogEntry, type RunningProxy, startProxy } from '../../src/proxy/index.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { WINDOW } from '../support/tool-loop.js';

const KEY = 'sk-test-proxy-key';
/** Text no plain ASCII writer produces as is: escapes, quotes, line separators, astral characters. */
const ODD = 'é ü 日本 😀 "quoted" \\ back\\slash \n\t \u2028 \u0001 </script> ]},{"x":';

/** One call: the fields in front of the conversation, and whether it is streamed. */
interface Call {
  front: { model: string; temperature: number; system: string };
  streamed: boolean;
}

/** What a client resends: the history so far (the test edits it between calls). */
type Send = (proxyUrl: string, call: Call, history: { user: string; answer: string }[]) => Promise<void>;

const chat: Send = async (url, { front, streamed }, history) => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'system', content: front.system }];
  for (const turn of history)
    messages.push({ role: 'user', content: turn.user }, { role: 'assistant', content: turn.answer });
  const params = { model: front.model, temperature: front.temperature, messages: messages.slice(0, -1) };
  if (streamed) for await (const _ of await client.chat.completions.create({ ...params, stream: true }));
  else await client.chat.completions.create(params);
};

const responses: Send = async (url, { front, streamed }, history) => {
  const client = new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 });
  const input: OpenAI.Responses.ResponseInputItem[] = [];
  for (const turn of history)
    input.push({ role: 'user', content: turn.user }, { role: 'assistant', content: turn.answer });
  const params = { model: front.model, temperature: front.temperature, instructions: front.system };
  if (streamed)
    for await (const _ of await client.responses.create({
      ...params,
      input: input.slice(0, -1),
      stream: true,
    }));
  else await client.responses.create({ ...params, input: input.slice(0, -1) });
};

const anthropic: Send = async (url, { front, streamed }, history) => {
  const client = new Anthropic({ apiKey: KEY, baseURL: url, maxRetries: 0 });
  const messages: Anthropic.MessageParam[] = [];
  for (const turn of history)
    messages.push({ role: 'user', content: turn.user }, { role: 'assistant', content: turn.answer });
  const params = {
    model: front.model,
    temperature: front.temperature,
    max_tokens: 256,
    system: front.system,
    messages: messages.slice(0, -1),
  };
  if (streamed) for await (const _ of await client.messages.create({ ...params, stream: true }));
  else await client.messages.create(params);
};

/** A turn of about 600 tokens: the history outgrows the 8,000-token window within the calls. */
const turn = (i: number) => ({
  user: `Turn ${i}: ${ODD} ${'check the host and report its state; '.repeat(60)}`,
  answer: `Answer ${i}: ${ODD}`,
});

let running: { providers: ProviderTestServer; proxies: RunningProxy[] } | undefined;
afterEach(async () => {
  for (const proxy of running?.proxies ?? []) await proxy.close({ graceMs: 1000 });
  await running?.providers.close();
  running = undefined;
});

describe('reading bodies from what is new, through the proxy with the Node SDKs', () => {
  for (const [name, send] of Object.entries({ chat, responses, anthropic })) {
    it(`${name}: the provider receives what a whole parse gives, byte for byte`, async () => {
      const provider = await startProviderTestServer();
      const logs: ProxyLogEntry[][] = [[], []];
      const proxies = await Promise.all(
        [0, undefined].map((reuseBytes, i) =>
          startProxy({
            upstream: provider.url,
            manager: new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW }),
            port: 0,
            log: (entry) => logs[i]!.push(entry),
            ...(reuseBytes === undefined ? {} : { reuseBytes }),
          }),
        ),
      );
      running = { providers: provider, proxies };
      const history = [turn(0), turn(1)];
      let front = { model: 'm-1', temperature: 0.5, system: `System ${ODD}` };
      const steps: ((calls: number) => void)[] = [
        () => history.push(turn(history.length)),
        // A field in front of the conversation changes (and its length with it).
        () => {
          front = { ...front, temperature: 0.25 };
          history.push(turn(history.length));
        },
        // A message in the middle is edited.
        () => {
          history[1] = { ...history[1]!, user: `Edited ${ODD}` };
          history.push(turn(history.length));
        },
        () => {
          front = { ...front, model: 'a-longer-model-name', system: `Other system ${ODD}` };
          history.push(turn(history.length));
        },
      ];
      for (let i = 0; i < 12; i++) steps.push(() => history.push(turn(history.length)));
      let calls = 0;
      for (const step of [() => {}, ...steps]) {
        step(calls);
        const call = { front, streamed: calls % 3 === 2 };
        for (const proxy of proxies) await send(proxy.url, call, history);
        calls++;
      }
      const bodies = provider.requests.map((request) => request.rawBody);
      expect(bodies).toHaveLength(2 * calls);
      for (let i = 0; i < calls; i++) expect(bodies[2 * i + 1], `call ${i}`).toBe(bodies[2 * i]);
      const [whole, fromNew] = logs as [ProxyLogEntry[], ProxyLogEntry[]];
      expect(whole.every((entry) => entry.reused === 0)).toBe(true);
      // The proxy reading from what is new did so on every call after the first, the ones
      // whose fields in front changed included (but Chat Completions' system prompt is its
      // first message: when it changes, nothing is repeated); and the manager compacted, so
      // spliced bodies were compared too.
      const reused = fromNew.map((entry) => entry.reused ?? 0);
      const none = reused.flatMap((count, i) => (i > 0 && count === 0 ? [i] : []));
      expect(none, 'calls that repeated nothing').toEqual(name === 'chat' ? [4] : []);
      expect(fromNew.some((entry) => entry.applied === true)).toBe(true);
      expect(fromNew.filter((entry) => entry.applied === true).length).toBe(
        whole.filter((entry) => entry.applied === true).length,
      );
    });
  }
});
