import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';

/**
 * review-86a: a key's name written with letters a reader takes for Latin ones (Cyrillic `а`, `р`,
 * `е`, `с`, `ѕ`; Greek capitals; mathematical bold or italic letters, `𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝`): the value
 * must not leave, and prose in those scripts is left as it is.
 */

const redact = getDefaultRedactor();
const VALUE = 'Zx9Qw7Lm3Vb8Kt2Rp4';
const bold = (text: string) =>
  text.replace(/[a-z]/g, (char) => String.fromCodePoint(0x1d41a + char.charCodeAt(0) - 97));
const italic = (text: string) =>
  text.replace(/[a-z]/g, (char) => String.fromCodePoint(0x1d44e + char.charCodeAt(0) - 97));

const CASES: [string, string][] = [
  ['Cyrillic а and р', `раssword=${VALUE}`],
  ['Cyrillic in a secret-named key', `ѕесrеt_key: ${VALUE}`],
  ['Greek capitals', `ΑΡΙ_ΚΕΥ=${VALUE}`],
  ['mathematical bold', `${bold('password')}=${VALUE}`],
  ['mathematical italic, in JSON', `{"${italic('token')}": "${VALUE}"}`],
  ['one Cyrillic о in a quoted key', `"auth_tоken": "${VALUE}"`],
];

describe('look-alike letters in a key name', () => {
  it.each(CASES)('%s', (_, secretLine) => {
    const text = `the deploy notes say ${secretLine}`;
    const out = redact(text);
    expect(out).not.toContain(VALUE.slice(0, 8));
    expect(out).not.toContain(VALUE.slice(-8));
    expect(out).toContain('the deploy notes say');
  });

  it('leaves Russian and Greek prose as it is', () => {
    const text =
      'Привет! Сорок человек проверили рассвет, а потом хорошо отдохнули. Καλημέρα, ο κόσμος είναι μεγάλος.';
    expect(redact(text)).toBe(text);
  });
});
