import { describe, expect, it } from 'vitest';
import { contextText, normalize } from './context-measures.js';
import {
  aggregateInstructionRuns,
  formatInstructionTable,
  INSTRUCTION_RETENTION_TARGET,
  instructionVerdict,
  runInstructionSession,
} from './instruction-retention.js';
import { assertKeysUnique, instructionSession } from './instruction-sessions.js';

describe('instruction sessions', () => {
  it('are deterministic per seed, with 5 to 15 instructions in several wordings, each key in its message only', () => {
    const a = instructionSession({ kind: 'support', seed: 2, calls: 300 });
    expect(instructionSession({ kind: 'support', seed: 2, calls: 300 })).toEqual(a);
    expect(instructionSession({ kind: 'support', seed: 3, calls: 300 }).instructions).not.toEqual(
      a.instructions,
    );
    expect(a.calls).toHaveLength(300);
    const forms = new Set<string>();
    for (let seed = 1; seed <= 6; seed++)
      for (const kind of ['coding', 'support', 'research'] as const) {
        const session = instructionSession({ kind, seed, calls: 300 });
        expect(session.instructions.length).toBeGreaterThanOrEqual(5);
        expect(session.instructions.length).toBeLessThanOrEqual(15);
        for (const i of session.instructions) forms.add(i.form);
      }
    expect(forms).toEqual(
      new Set(['keep', 'dont_touch', 'never', 'always_use', 'ticket', 'deadline', 'use_path']),
    );
    // Tool-heavy: outputs of 200 to 3,000 tokens (about four characters a token).
    const outputs = a.calls.flatMap((c) => c.after.filter((m) => m.role === 'tool'));
    const sizes = outputs.map((m) => String(m.content).length / 4).filter((n) => n > 50);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(150);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(3_300);
    expect(() => assertKeysUnique(a)).not.toThrow();
  });

  it('assertKeysUnique rejects a key that another message also holds', () => {
    const session = instructionSession({ kind: 'coding', seed: 1, calls: 40 });
    const first = session.instructions[0]!;
    session.calls[session.calls.length - 1]!.after.push({ role: 'assistant', content: first.keys[0] });
    expect(() => assertKeysUnique(session)).toThrow(/is in 2 messages/);
  });
});

describe('instruction retention (reduced: one kind, one window, 120 calls)', () => {
  it(`keeps >= ${INSTRUCTION_RETENTION_TARGET * 100}% of (instruction, later call) pairs in an 8k window`, async () => {
    const session = instructionSession({ kind: 'coding', seed: 1, calls: 120, instructions: [8, 8] });
    const run = await runInstructionSession(session, 8_000);
    expect(run.instructions).toBe(8);
    // The window forced many summaries: the instructions went through rolling compaction.
    expect(run.summaries).toBeGreaterThan(20);
    expect(run.maxRequestTokens).toBeLessThanOrEqual(8_000);
    expect(run.pairs).toBeGreaterThan(200);
    expect(run.held / run.pairs).toBeGreaterThanOrEqual(INSTRUCTION_RETENTION_TARGET);
    const rows = aggregateInstructionRuns([run]);
    expect(rows.map((r) => [r.kind, r.window])).toEqual([
      ['coding', '8k'],
      ['all', 'all'],
    ]);
    expect(formatInstructionTable(rows)).toMatch(/coding\s+8k\s+1\s+8\s+\d+\.\d% \(\d+\/\d+\)/);
    expect(instructionVerdict(rows)).toMatch(/^target: instruction retention keeps .*: MET$/);
    // The key content is what is checked: the sentence itself is in the raw history.
    const raw = normalize(contextText(session.calls.flatMap((c) => c.before)));
    for (const i of session.instructions) for (const key of i.keys) expect(raw).toContain(normalize(key));
  });
});
