/**
 * Issue 47 point 2: `new CompactManager` compiled the built-in redaction rules in one piece
 * (10-30 ms of CPU in a fresh process, the CLI's longest block). The constructor now checks the
 * caller's patterns only; `ready()` compiles the rules in steps, and a redaction that comes
 * first finishes the compile at once, so nothing goes out unredacted.
 */
import { describe, expect, it } from 'vitest';
import { CompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { ruleMatchersBuilt } from '../../src/core/redaction/redaction-scanner.js';
import { createRedactor, redactorSteps } from '../../src/core/redaction/redactor.js';
import { releasableRedactor } from '../../src/core/redaction/releasable-redactor.js';

const secret = 'export GITHUB_TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyzAB; password: hunter2';

describe('the built-in redaction rules, compiled after the constructor', () => {
  it('are not compiled by the constructor, and are by ready()', async () => {
    const before = ruleMatchersBuilt();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    expect(ruleMatchersBuilt()).toBe(before);
    await manager.ready();
    expect(ruleMatchersBuilt()).toBeGreaterThan(before);
    await manager.shutdown();
  });

  it("still reject a bad pattern of the caller's in the constructor", () => {
    const make = () =>
      new CompactManager({
        model: 'gpt-4o',
        maxContextTokens: 128_000,
        redaction: { extraPatterns: ['(unclosed'] },
      });
    expect(make).toThrow(CompactError);
    expect(make).toThrow(/not a valid regular expression/);
  });

  it('are compiled in more than one step', () => {
    let steps = 0;
    const build = redactorSteps()();
    for (let step = build.next(); !step.done; step = build.next()) steps++;
    expect(steps).toBeGreaterThan(4);
  });

  it('give the answers of a redactor built at once, also when a call comes in the middle of the steps', () => {
    const whole = createRedactor();
    const { redact } = releasableRedactor(() => {
      const build = redactorSteps()();
      build.next();
      build.next();
      return build;
    });
    const out = redact(secret);
    expect(out).toBe(whole(secret));
    expect(out).not.toContain('ghp_0123');
    expect(out).not.toContain('hunter2');
  });

  it('are compiled by warm() with the same answers, and not again by the next call', async () => {
    const whole = createRedactor();
    let builds = 0;
    const steps = redactorSteps();
    const { redact, warm } = releasableRedactor(() => {
      builds++;
      return steps();
    });
    await warm();
    expect(builds).toBe(1);
    expect(redact(secret)).toBe(whole(secret));
    expect(builds).toBe(1);
  });
});
