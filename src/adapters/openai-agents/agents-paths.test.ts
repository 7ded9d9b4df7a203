import { Agent, MemorySession, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  requestViolations,
  reusedIdLoop,
  STEPS,
  summaryCount,
  toolOutput,
  WINDOW,
} from '../../../test/support/tool-loop.js';
import { CompactManager } from '../../core/compact-manager.js';
import type { ProviderTestServer } from '../../testing/provider-test-server.js';
import { startProviderTestServer } from '../../testing/provider-test-server.js';
import { CompactionSession, compactionInputFilter } from './index.js';

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

describe('OpenAI Agents JS: 40-step runs', () => {
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
