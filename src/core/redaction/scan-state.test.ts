/**
 * Issue 47 point 2: a compaction redacts every message it summarizes; the rule matcher made its
 * per-text state (gates, best match, recent lists) for each text, a few hundred bytes, even when
 * the text held no trigger at all. Now only a text with a trigger makes it; the output is the same.
 */
import { describe, expect, it } from 'vitest';
import { ruleScanStatesMade } from './redaction-scanner.js';
import { createRedactor, REDACTED } from './redactor.js';

describe('rule matcher per-text state', () => {
  it('is made only for a text in which a trigger occurs', () => {
    const redact = createRedactor();
    // The rules are compiled on the first use: a warm-up text first.
    expect(redact('warm up')).toBe('warm up');
    const before = ruleScanStatesMade();
    for (let i = 0; i < 200; i++) expect(redact(`hi ${i}`)).toBe(`hi ${i}`);
    expect(ruleScanStatesMade()).toBe(before);
    // A text with a secret is scanned with its state, and redacted as before; the pass's state
    // (made once per pass) does not leak into the next text.
    expect(redact('password: hunter2')).toBe(`password: ${REDACTED}`);
    expect(ruleScanStatesMade()).toBeGreaterThan(before);
    expect(redact('hi again')).toBe('hi again');
    expect(redact('a: 1 password: x b: 2 password: y')).toBe(
      `a: 1 password: ${REDACTED} b: 2 password: ${REDACTED}`,
    );
  });
});
