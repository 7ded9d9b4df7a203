import { Agent, MemorySession, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  reportedInput,
  requestViolations,
  reusedIdLoop,
  STEPS,
  summaryCount,
  toolOutput,
  WINDOW,
} from '../../../test/support/tool-loop.js';
import type { AnyCompactEvent } from '../../core/events/events.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { readRequest, requestTokens } from '../../testing/agent-model-script.js';
import type { ProviderTestServer } from '../../testing/provider-test-server.js';
import { startProviderTestServer } from '../../testing/provider-test-server.js';
import { CompactionModelProvider, CompactionSession, compactionInputFilter } from './index.js';

const INSTRUCTIONS = 'You are an SRE assistant. Check every host before answering.';
let step = 0;
const probe = tool({
  name: 'probe',
  description: 'Probe the hosts',
  parameters: z.object({ step: z.number() }),
  execute: async () => toolOutput(step++),
});
const agent = new Agent({ name: 'sre', instructions: INSTRUCTIONS, tools: [probe], model: 'gpt-4o' });

let server: ProviderTestServer;
let runner: Runner;
beforeEach(async () => {
  // The Agents SDK deduplicates items by call id, so each call gets its own id here.
  server = await startProviderTestServer({
    handler: reusedIdLoop({ tool: 'probe', idFor: (n, seq) => `call_${seq}_${n}` }),
  });
  runner = new Runner({
    modelProvider: new OpenAIProvider({ apiKey: 'test-key', baseURL: server.openaiBaseURL }),
  });
  setTracingDisabled(true);
});
afterEach(async () => {
  await server.close();
  vi.restoreAllMocks();
});

const newManager = () => new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW });

describe(`OpenAI Agents JS: ${STEPS}-step runs`, () => {
  it('compactionInputFilter keeps every model call of a run under the window', async () => {
    const manager = newManager();
    const filter = compactionInputFilter(manager, { sessionId: 'filter' });
    const result = await runner.run(agent, 'Probe every host, one at a time.', {
      callModelInputFilter: filter,
      maxTurns: STEPS + 5,
    });
    expect(String(result.finalOutput)).toContain('Done after');
    expect(server.requests).toHaveLength(STEPS + 1);
    expect(requestViolations(server, manager)).toEqual([]);
  });

  it('session.runOptions() (session + its filter) over three runs: under the window, one summary at most', async () => {
    const manager = newManager();
    const session = new CompactionSession({ session: new MemorySession(), manager });
    for (const task of ['Probe every host.', 'Probe them again.', 'And once more.']) {
      await runner.run(agent, task, { ...session.runOptions(), maxTurns: STEPS + 5 });
    }
    expect(server.requests).toHaveLength(3 * (STEPS + 1));
    expect(requestViolations(server, manager)).toEqual([]);
    expect(server.requests.some((request) => summaryCount(request) === 1)).toBe(true);
  });

  it('a session with a filter of another session id never sends two summaries', async () => {
    const manager = newManager();
    const session = new CompactionSession({ session: new MemorySession(), manager, sessionId: 'stored' });
    const filter = compactionInputFilter(manager, { sessionId: 'chat-42' });
    for (const task of ['Probe every host.', 'Probe them again.', 'And once more.']) {
      await runner.run(agent, task, { session, callModelInputFilter: filter, maxTurns: STEPS + 5 });
    }
    expect(requestViolations(server, manager)).toEqual([]);
  });

  it('the session alone warns once that a run is compacted only between runs', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const manager = newManager();
    const session = new CompactionSession({ session: new MemorySession(), manager });
    await runner.run(agent, 'Probe every host.', { session, maxTurns: STEPS + 5 });
    await runner.run(agent, 'Probe them again.', { session, maxTurns: STEPS + 5 });
    const warnings = warn.mock.calls.filter(([text]) => String(text).includes('session.inputFilter()'));
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]![0])).toContain('runOptions()');
  });
});

describe('OpenAI Agents JS: usage and overflow recovery (CompactionModelProvider)', () => {
  const tooLong = {
    status: 400,
    json: {
      error: {
        message:
          'Your input exceeds the context window of this model. Please adjust your input and try again.',
        type: 'invalid_request_error',
        param: 'input',
        code: 'context_length_exceeded',
      },
    },
  };

  async function recoveringRunner(reject: (seq: number) => boolean) {
    await server.close();
    server = await startProviderTestServer({
      handler: reusedIdLoop({
        tool: 'probe',
        steps: 14,
        idFor: (n, seq) => `call_${seq}_${n}`,
        override: (request) => (reject(request.seq) ? tooLong : undefined),
      }),
    });
    const provider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.openaiBaseURL });
    return new Runner({ modelProvider: new CompactionModelProvider(provider) });
  }

  it('feeds usage and retries once after context_length_exceeded, streamed or not', async () => {
    const recovering = await recoveringRunner((seq) => seq % 10 === 5);
    const manager = newManager();
    const events: AnyCompactEvent[] = [];
    manager.on('*', (event) => events.push(event as AnyCompactEvent));
    const session = new CompactionSession({ session: new MemorySession(), manager, sessionId: 'agents' });
    const first = await recovering.run(agent, 'Probe every host.', { ...session.runOptions(), maxTurns: 20 });
    const second = await recovering.run(agent, 'Probe them again.', {
      ...session.runOptions(),
      maxTurns: 20,
      stream: true,
    });
    await second.completed;
    expect(String(first.finalOutput)).toContain('Done after');
    const rejected = server.requests.filter((request) => request.seq % 10 === 5);
    expect(rejected.length).toBeGreaterThanOrEqual(3);
    expect(rejected.some((request) => request.stream)).toBe(true);
    expect(rejected.some((request) => !request.stream)).toBe(true);
    const recoveries = events.filter(
      (event) =>
        event.name === 'compact.trigger_decision' && event.properties.note?.startsWith('overflow_recovery'),
    );
    expect(recoveries).toHaveLength(rejected.length);
    for (const request of rejected) {
      const sent = requestTokens(manager, readRequest(request));
      const retried = requestTokens(manager, readRequest(server.requests[request.seq]!));
      expect(retried).toBeLessThanOrEqual(Math.ceil(sent * 0.8));
    }
    expect(manager.lastReportedUsage('agents')?.inputTokens).toBe(reportedInput(server.requests.at(-1)!));
  });

  it('surfaces any other error unchanged', async () => {
    await server.close();
    server = await startProviderTestServer({
      handler: () => ({ error: { status: 400, message: 'Invalid tool schema' } }),
    });
    const provider = new OpenAIProvider({ apiKey: 'test-key', baseURL: server.openaiBaseURL });
    const recovering = new Runner({ modelProvider: new CompactionModelProvider(provider) });
    const filter = compactionInputFilter(newManager(), { sessionId: 'bad' });
    await expect(recovering.run(agent, 'Hello', { callModelInputFilter: filter })).rejects.toThrow(
      'Invalid tool schema',
    );
    expect(server.requests).toHaveLength(1);
  });
});
