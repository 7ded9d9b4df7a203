import { afterEach, describe, expect, it, vi } from 'vitest';
import { LOOK_ALIKE_BLOCK } from '../../src/core/redaction/hidden-key-windows.js';
import { createRedactor } from '../../src/core/redaction/redactor.js';

/**
 * review-87a: the look for hidden keys (hidden-key-windows.ts: look-alike names before `=` and
 * `:`, fullwidth runs, invisible references) ran once per scan pass of a redaction (the PEM
 * pass, then the other rules), and read every name of look-alike letters as Latin (`хор=`,
 * `сор:`), up to 25 ms per 10 MB of separator-dense Cyrillic text each time. Counted, not
 * timed: the regex tests each look makes, on a text no pass changes.
 */

/** Calls of `RegExp.prototype.test` by a regex whose source is `source`, while `run` runs. */
function testsOf(source: string, run: () => void): number {
  let calls = 0;
  const test = RegExp.prototype.test;
  const spy = vi.spyOn(RegExp.prototype, 'test').mockImplementation(function (this: RegExp, text: string) {
    if (this.source === source) calls++;
    return test.call(this, text);
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return calls;
}

/** The gate of the look-alike names (`LOOK_ALIKE_BLOCK`) and the secret-word test of a name. */
const LOOK_GATE = LOOK_ALIKE_BLOCK.source;
const SECRET_WORDS = /pass|pwd|secret|token|key|auth|cred|private|session|cookie|bearer|dsn|conn/i.source;
const VALUE = 'Zx9Qw7Lm3Vb8Kt2Rp4';

afterEach(() => vi.restoreAllMocks());

describe('the look for hidden keys', () => {
  const redact = createRedactor();

  it('runs once per redaction, not once per scan pass', () => {
    const text = 'Скрипт читает окружение: проверяет адрес=хост и откатывает при сбое.\n'.repeat(50);
    expect(testsOf(LOOK_GATE, () => expect(redact(text)).toBe(text))).toBe(1);
  });

  it('reads no name of look-alike letters with no letter of b d k n s t w as Latin', () => {
    const text = 'Он сказал: ору, сор, рос, хор=мор; ура: нос, ох: ах\n'.repeat(20);
    expect(testsOf(SECRET_WORDS, () => expect(redact(text)).toBe(text))).toBe(0);
  });

  it('still finds a disguised name after a pass that changed the text (a PEM block before it)', () => {
    const pem = `-----BEGIN PRIVATE KEY-----\n${'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC'.repeat(4)}\n-----END PRIVATE KEY-----`;
    for (const line of [`раssword=${VALUE}`, `ТОКЕN: ${VALUE}`, `"tоken": "${VALUE}"`]) {
      const out = redact(`${pem}\nthen ${line}\nand more`);
      expect(out, line).not.toContain('MIIEvQIBADANBgkq');
      expect(out, line).not.toContain(VALUE.slice(0, 8));
      expect(out, line).toContain('and more');
    }
  });
});
