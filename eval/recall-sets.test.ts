import { describe, expect, it } from 'vitest';
import { EmbeddedSummarizer } from '../src/core/summary/embedded-summarizer.js';
import { agentIdSession } from './agent-id-sessions.js';
import {
  aggregateRuns,
  assertFactsPresent,
  contextText,
  runFidelity,
  slidingWindow,
} from './fidelity-harness.js';
import { personalSession } from './personal-sessions.js';
import { plantedSession } from './planted-session.js';

const normalize = (text: string) => text.replace(/\s+/g, ' ').toLowerCase();

describe('personal conversations', () => {
  it('are deterministic per seed: dated sessions, facts in passing among small talk, asked about at the end', () => {
    const a = personalSession({ seed: 1 });
    expect(personalSession({ seed: 1 })).toEqual(a);
    expect(personalSession({ seed: 2 }).messages).not.toEqual(a.messages);
    expect(a.facts).toHaveLength(12);
    expect(() => assertFactsPresent(a)).not.toThrow();
    const stamps = a.messages.filter((m) =>
      /^(?:\[\d{1,2} \w+ \d{4}|Session \d+ — )/.test(String(m.content)),
    );
    expect(stamps).toHaveLength(16);
    // Odd seeds prefix each message with the speaker's name.
    expect(String(a.messages[1]!.content)).toMatch(/^[A-Z][a-z]+: /);
    expect(String(personalSession({ seed: 2 }).messages[1]!.content)).not.toMatch(/^[A-Z][a-z]+: /);
    // The closing question names no answer.
    const last = normalize(String(a.messages.at(-1)!.content));
    for (const fact of a.facts) expect(fact.probes.some((p) => !last.includes(normalize(p)))).toBe(true);
    // Facts are few among many messages.
    expect(a.messages.length).toBeGreaterThan(200);
  });
});

describe('agent runs needing early ids', () => {
  it('reuse call_0 every turn, answer parallel calls out of order, and need ids from early turns', () => {
    const run = agentIdSession({ seed: 1 });
    expect(agentIdSession({ seed: 1 })).toEqual(run);
    expect(() => assertFactsPresent(run)).not.toThrow();
    const callIds = run.messages.flatMap((m) =>
      ((m.tool_calls as { id: string }[] | undefined) ?? []).map((c) => c.id),
    );
    expect(callIds.filter((id) => id === 'call_0').length).toBeGreaterThan(5);
    const results = run.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    expect(results.slice(2, 5)).toEqual(['call_2', 'call_0', 'call_1']);
    expect(run.facts.length).toBeGreaterThanOrEqual(7);
    // Most needed ids first appear in the first third of the run.
    const early = run.facts.filter((f) => f.messageIndex < run.messages.length / 3);
    expect(early.length).toBeGreaterThanOrEqual(run.facts.length - 2);
  });
});

describe('same-size sliding window', () => {
  it('keeps the system messages and the latest messages within the tokens, never opening on a tool result', () => {
    const messages = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'one two three' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c', content: 'four five' },
      { role: 'assistant', content: 'six' },
    ];
    const estimate = (list: Record<string, unknown>[]) =>
      contextText(list).split(/\s+/).filter(Boolean).length;
    expect(slidingWindow(messages, 100, estimate)).toEqual(messages);
    expect(slidingWindow(messages, 4, estimate)).toEqual([messages[0], messages[4]]);
    expect(slidingWindow(messages, 0, estimate)).toEqual([messages[0]]);
  });
});

describe('recall of the embedded summarizer (regression guard, summarizer alone)', () => {
  it('at 1/8 keeps >= 3x the facts of a same-size window and >= 90% of the ids the remaining actions need', async () => {
    const runs = await runFidelity({
      sets: {
        personal: [personalSession({ seed: 1 }), personalSession({ seed: 2 })],
        'agent-ids': [agentIdSession({ seed: 1 }), agentIdSession({ seed: 2 })],
      },
      summarizers: [{ label: 'embedded', summarizer: new EmbeddedSummarizer() }],
      strategies: ['task_state'],
      ratios: [8],
      modes: ['direct', 'direct-rolling'],
    });
    const rows = aggregateRuns(runs);
    expect(rows).toHaveLength(4);
    for (const row of rows) {
      expect(row.failures).toBe(0);
      expect(row.ratio).toBeGreaterThanOrEqual(7);
      if (row.set === 'personal')
        expect(row.retained).toBeGreaterThanOrEqual(3 * Math.max(1, row.windowRetained));
      else expect(row.retainedShare).toBeGreaterThanOrEqual(0.9);
    }
  });
});

describe('rolling compaction through the manager (regression guard, issue 20)', () => {
  it('keeps >= 90% of the ids at 1/8 and of the planted facts at 20:1 when a preflight runs before every call', async () => {
    const rolling = (sets: Parameters<typeof runFidelity>[0]['sets'], ratio: number) =>
      runFidelity({
        sets,
        summarizers: [{ label: 'embedded', summarizer: new EmbeddedSummarizer() }],
        strategies: ['task_state'],
        ratios: [ratio],
        modes: ['rolling'],
      });
    const runs = [
      ...(await rolling({ 'agent-ids': [agentIdSession({ seed: 1 }), agentIdSession({ seed: 2 })] }, 8)),
      ...(await rolling({ planted: [plantedSession({ seed: 1 })] }, 20)),
    ];
    const rows = aggregateRuns(runs);
    expect(rows.map((row) => row.set).sort()).toEqual(['agent-ids', 'planted']);
    for (const row of rows) {
      expect(row.failures).toBe(0);
      // Many rolling compactions: each round re-summarizes the previous version.
      expect(runs.find((run) => run.set === row.set)!.compactions).toBeGreaterThan(5);
      expect(row.retainedShare, row.set).toBeGreaterThanOrEqual(0.9);
    }
  });
});
