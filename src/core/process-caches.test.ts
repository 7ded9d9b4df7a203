import { describe, expect, it } from 'vitest';
import { instructionScore } from './language/instruction-model.js';
import { lexicalClass } from './language/lexical-class.js';
import { wordRank } from './language/word-rarity.js';
import { CompactManager } from './manager/compact-manager.js';
import { onProcessCachesRelease } from './process-caches.js';
import { getDefaultRedactor, redactorSteps } from './redaction/redactor.js';
import { releasableRedactor } from './redaction/releasable-redactor.js';

/**
 * Issue 47 point 4: the tables the core shares across managers (the instruction model, the
 * word ranks, the lexical memo, the default redactor) are data, dropped when the last manager
 * shuts down, and built again with the same answers on next use.
 */
describe('process caches', () => {
  it('are dropped when the last manager shuts down, not before', async () => {
    let released = 0;
    onProcessCachesRelease(() => released++);
    const first = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    const second = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    await first.compact('s', [{ role: 'user', content: 'Never edit files under src/generated/.' }]);
    await first.shutdown();
    expect(released).toBe(0);
    await second.shutdown();
    expect(released).toBe(1);
    // A manager made later holds them again: its shutdown is the last one.
    const third = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    await third.shutdown();
    expect(released).toBe(2);
  });

  it('answer the same once built again', async () => {
    const sentence = 'Never edit files under src/generated/, they are produced by codegen.';
    const secret = 'password=hunter2hunter2 and AKIAIOSFODNN7EXAMPLE';
    const before = [
      instructionScore(sentence),
      wordRank('guitar'),
      lexicalClass('refactor'),
      getDefaultRedactor()(secret),
    ];
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    await manager.shutdown();
    const after = [
      instructionScore(sentence),
      wordRank('guitar'),
      lexicalClass('refactor'),
      getDefaultRedactor()(secret),
    ];
    expect(after).toEqual(before);
    expect(before[3]).not.toContain('hunter2');
  });

  it("a manager's redactor drops its compiled rules on release and builds them again when called", () => {
    let builds = 0;
    const steps = redactorSteps();
    const { redact, release } = releasableRedactor(() => {
      builds++;
      return steps();
    });
    const secret = 'token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB here';
    expect(builds).toBe(0); // compiled on first use or by ready()'s warm-up (bad patterns fail in redactorSteps)
    const before = redact(secret);
    expect(builds).toBe(1);
    expect(before).not.toContain('ghp_0123');
    redact(secret);
    expect(builds).toBe(1);
    release();
    expect(builds).toBe(1);
    expect(redact(secret)).toBe(before);
    expect(builds).toBe(2);
  });
});
