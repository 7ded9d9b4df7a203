/**
 * Several proxy instances sharing sessions through the Redis store (a real redis-server), and
 * a client that sends no session header resuming its session after every proxy restarted: the
 * Anthropic SDK resends its whole history each step, alternating between two proxies, then
 * talking to a third started after both stopped. Each call resumes the session's compacted
 * view (the count before compacting stays near the window while the raw history grows past
 * two and a half windows), no call finds the history diverged, and every request stays in the window.
 * `agent-compaction status --store redis` then reads the session by its fingerprint id.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { type ProxyLogEntry, type RunningProxy, startProxy } from '../../src/proxy/index.js';
import { redisSessionStore } from '../../src/storage/redis/index.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { cli } from '../support/cli-fixtures.js';
import { type RedisTestServer, redisAvailable, startRedisServer } from '../support/redis-server.js';
import { requestViolations, reusedIdLoop, toolOutput, WINDOW } from '../support/tool-loop.js';

const withRedis = redisAvailable('proxy Redis tests');
const STEPS = 30;

let redis: RedisTestServer | undefined;
let provider: ProviderTestServer | undefined;
beforeAll(async () => {
  if (!withRedis) return;
  redis = await startRedisServer();
  provider = await startProviderTestServer({
    handler: reusedIdLoop({ tool: 'probe', steps: STEPS, idFor: (step) => `toolu_${step}` }),
  });
});
afterAll(async () => {
  await provider?.close();
  await redis?.stop();
});

interface Instance {
  proxy: RunningProxy;
  manager: CompactManager;
  stop(): Promise<void>;
}

const events: AnyCompactEvent[] = [];
const logs: ProxyLogEntry[] = [];

async function instance(): Promise<Instance> {
  const store = redisSessionStore({ url: redis!.url });
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, store });
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  const proxy = await startProxy({
    upstream: provider!.url,
    manager,
    port: 0,
    log: (entry) => logs.push(entry),
  });
  return {
    proxy,
    manager,
    async stop() {
      await proxy.close({ graceMs: 1000 });
      await manager.shutdown();
      await store.close();
    },
  };
}

describe.skipIf(!withRedis)('sessions shared through Redis', () => {
  it('two instances, then a restart: a client without a session header resumes its session', async () => {
    let a = await instance();
    let b = await instance();
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Probe every host.' }];
    const tools: Anthropic.Tool[] = [{ name: 'probe', input_schema: { type: 'object', properties: {} } }];
    let restarted = false;
    let answer = '';
    for (let step = 0; step <= STEPS; step++) {
      if (step === Math.floor(STEPS / 2)) {
        // Every proxy stops; a new one starts with nothing in memory.
        await a.stop();
        await b.stop();
        a = await instance();
        b = a;
        restarted = true;
      }
      const via = step % 2 === 0 ? a : b;
      const client = new Anthropic({ apiKey: 'k', baseURL: via.proxy.url, maxRetries: 0 });
      const message = await client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages,
        tools,
      });
      const call = message.content.find((block) => block.type === 'tool_use');
      if (!call) {
        answer = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        break;
      }
      messages.push({ role: 'assistant', content: message.content });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: call.id, content: toolOutput(step) }],
      });
    }
    expect(restarted).toBe(true);
    expect(answer).toBe(`Done after ${STEPS} steps.`);
    const raw = a.manager.estimate(messages, { format: 'anthropic', tools }).total;
    expect(raw).toBeGreaterThan(2.5 * WINDOW);
    // One session, from the fingerprint, on every instance.
    expect(new Set(logs.map((entry) => entry.session)).size).toBe(1);
    // Every call resumed the compacted view: none saw the raw history, none found it diverged.
    expect(Math.max(...logs.map((entry) => entry.tokensBefore ?? 0))).toBeLessThan(WINDOW + 2000);
    expect(events.filter((event) => JSON.stringify(event).includes('history_diverged'))).toEqual([]);
    expect(logs.filter((entry) => entry.applied).length).toBeGreaterThanOrEqual(3);
    // Counted with gpt-4o's tokenizer, an Anthropic request is calibrated by the reported usage.
    expect(requestViolations(provider!, a.manager, 'reported')).toEqual([]);
    await a.stop();
    // `status --store redis` reads the proxy's session by the id it found (docs/proxy.md).
    const session = logs[0]!.session!;
    const status = await cli(['status', session, '--store', 'redis', '--json'], '', {
      REDIS_URL: redis!.url,
    });
    expect(status.code, status.stderr).toBe(0);
    const state = JSON.parse(status.stdout) as { sessionId: string; rewrites: Record<string, unknown> };
    expect(state.sessionId).toBe(session);
    // The compactions the proxies made (old tool results cleared) are in the stored state.
    expect(Object.keys(state.rewrites).length).toBeGreaterThan(0);
  });
});
