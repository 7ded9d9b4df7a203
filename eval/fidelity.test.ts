import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summaryBody } from '../src/core/messages/message.js';
import { EmbeddedSummarizer } from '../src/core/summary/embedded-summarizer.js';
import {
  aggregateRuns,
  assertFactsPresent,
  contextText,
  type FidelityRun,
  formatTable,
  runFidelity,
} from './fidelity-harness.js';
import { plantedSession } from './planted-session.js';
import { loadSweAgentSessions } from './swe-agent-sessions.js';

const FIXTURES = join(import.meta.dirname, '..', 'test', 'fixtures', 'fidelity');
const normalize = (text: string) => text.replace(/\s+/g, ' ').toLowerCase();

describe('planted sessions', () => {
  it('are deterministic per seed and carry 28 facts, each in the history exactly where planted', () => {
    const a = plantedSession({ seed: 3 });
    expect(plantedSession({ seed: 3 })).toEqual(a);
    expect(plantedSession({ seed: 4 }).messages).not.toEqual(a.messages);
    expect(a.facts).toHaveLength(28);
    expect(new Set(a.facts.map((f) => f.kind))).toEqual(
      new Set(['ticket', 'uuid', 'file', 'branch', 'constraint', 'decision', 'open_task', 'number']),
    );
    for (const fact of a.facts) {
      const carrier = normalize(contextText([a.messages[fact.messageIndex]]));
      for (const probe of fact.probes) expect(carrier).toContain(normalize(probe));
    }
    expect(() => assertFactsPresent(a)).not.toThrow();
    // Facts sit among filler: far more messages than facts, spread over the session.
    expect(a.messages.length).toBeGreaterThan(150);
    const positions = a.facts.map((f) => f.messageIndex);
    expect(Math.max(...positions) - Math.min(...positions)).toBeGreaterThan(a.messages.length / 2);
  });

  it('assertFactsPresent rejects a fact that is not in the history', () => {
    const session = plantedSession({ seed: 1, turns: 4 });
    session.facts.push({ id: 'x', kind: 'ticket', probes: ['NOPE-0000'], messageIndex: 1 });
    expect(() => assertFactsPresent(session)).toThrow(/NOPE-0000/);
  });
});

describe('SWE-agent transcripts', () => {
  it('convert tool_call_ids and take key facts from the task and the agent in the first half', () => {
    const [session] = loadSweAgentSessions(FIXTURES);
    expect(session!.name).toBe('mini');
    const tool = session!.messages.find((m) => m.role === 'tool')!;
    expect(tool.tool_call_id).toBe('call_1');
    expect(tool).not.toHaveProperty('tool_call_ids');
    const probes = session!.facts.map((f) => f.probes[0]);
    expect(probes.sort()).toEqual(
      [
        'TimeDelta',
        'src/marshmallow/fields.py',
        'ValueError',
        'https://example.org/issues/1867',
        '_serialize',
        'tests/test_fields.py',
      ].sort(),
    );
    // Not key: the demonstration, tool output, the second half, the system prompt.
    for (const absent of ['demo_only.py', 'DemoThing', 'utils_listing.py', 'late_file.py', 'open'])
      expect(probes).not.toContain(absent);
    expect(session!.facts.find((f) => f.probes[0] === 'ValueError')!.kind).toBe('error');
  });

  it('a missing directory gives no sessions', () => {
    expect(loadSweAgentSessions(join(FIXTURES, 'missing'))).toEqual([]);
  });
});

describe('fidelity of the embedded summarizer (regression guard)', () => {
  const sessions = [plantedSession({ seed: 1 }), plantedSession({ seed: 2 })];
  let runs: FidelityRun[];
  const summaries: string[] = [];

  it('retains >= 90% of planted facts at 10:1 with task_state (one-shot)', async () => {
    const embedded = new EmbeddedSummarizer();
    runs = await runFidelity({
      sets: { planted: sessions },
      summarizers: [
        {
          label: 'embedded',
          summarizer: {
            name: embedded.name,
            summarize: async (request) => {
              const result = await embedded.summarize(request);
              summaries.push(result.text);
              return result;
            },
          },
        },
      ],
      strategies: ['task_state'],
      ratios: [10],
      modes: ['one-shot'],
    });
    const [row] = aggregateRuns(runs);
    expect(row).toMatchObject({ set: 'planted', strategy: 'task_state', targetRatio: 10, sessions: 2 });
    expect(row!.ratio).toBeGreaterThanOrEqual(10);
    expect(row!.retainedShare).toBeGreaterThanOrEqual(0.9);
    // Most facts were folded into the summary: the summary itself carries them.
    expect(row!.summarizedFacts).toBeGreaterThan(row!.facts / 2);
    expect(row!.summarizedShare).toBeGreaterThanOrEqual(0.9);
    for (const run of runs) {
      expect(run.failure).toBeUndefined();
      expect(run.summaryTokens).toBeLessThanOrEqual(run.maxSummaryTokens + 16);
      expect(run.writtenBy).toBe('embedded');
    }
  });

  it('without dumping raw text: every line is a heading or a bullet, and every word of it is from the input', () => {
    expect(summaries).toHaveLength(2);
    summaries.forEach((summary, k) => {
      const body = summaryBody(summary);
      expect(body).toContain('## Conversation');
      const raw = normalize(contextText(sessions[k]!.messages));
      const lines = body.split('\n').filter((l) => l.trim() !== '');
      for (const line of lines) {
        expect(line.startsWith('## ') || line.startsWith('- ')).toBe(true);
        if (!line.startsWith('- ')) continue;
        const item = line.slice(2);
        // Tool facts are `name(key=value, ...) → outcome`: check each value; prose: each word.
        const tool = /^([\w.-]+)\((.*)\) → (.*)$/.exec(item);
        // (A result the pipeline cleared before summarizing shows as `(cleared; recall ref ...)`.)
        const outcome = tool && !tool[3]!.startsWith('(cleared') ? tool[3]! : '';
        const pieces = tool
          ? [tool[1]!, ...`${tool[2]} ${outcome}`.split(/[\s=,[\]()|]+/).filter((p) => /[\d/]/.test(p))]
          : item
              .replace(/^(?:user|assistant|excerpt): /, '')
              // The user's own words are quoted (issue 20).
              .replace(/^"(.*)"$/, '$1')
              .split(/\s+/);
        for (const piece of pieces) expect(raw, line).toContain(normalize(piece.replace(/…$/, '')));
      }
      // Far smaller than what it summarizes.
      expect(body.length * 10).toBeLessThan(raw.length);
    });
  });

  it('aggregates and prints a table', () => {
    const failed: FidelityRun = { ...runs[0]!, failure: 'over budget', session: 'x' };
    const rows = aggregateRuns([...runs, failed]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.failures).toBe(1);
    expect(rows[0]!.sessions).toBe(2);
    const table = formatTable(rows);
    expect(table.split('\n')[0]).toMatch(/^set\s+summarizer\s+mode\s+strategy\s+target\s+ratio\s+retained/);
    expect(table).toMatch(/planted\s+embedded\s+one-shot\s+task_state\s+10:1\s+\d+\.\d:1\s+\d+\.\d%/);
    expect(table).toContain('1 over budget');
  });
});
