import { describe, expect, it } from 'vitest';
import { getDefaultRedactor, REDACTED } from '../../src/core/redaction/redactor.js';

/**
 * Issue 36: the rules added for the issue (command lines, suffixed key names, unicode
 * escapes, PEM blocks checked for key material, code-shaped values) keep every quantifier
 * bounded: 10 MB built to make a backtracking pattern blow up comes back (no timing
 * assertion: a rule that backtracked without bound would not return at all on this much).
 */

const SIZE = 10 * 1024 * 1024;
const fill = (unit: string) => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);

const INPUTS: readonly (readonly [string, string])[] = [
  ['mysql with many arguments and -p flags', `mysql ${fill('-uroot -p -x ')}`],
  ['docker login with many arguments', `docker login ${fill('-u me -q ')}`],
  ['--password flags without values', fill('--password --password= ')],
  ['suffixed key names without a separator', fill('SECRET_KEY_BASE_')],
  ['key names with tails and short values', fill('OPENAI_KEY=ab1 ')],
  ['unicode escapes of letters', fill('\\u0067hp_\\u0041')],
  ['doubly escaped unicode escapes', fill('\\\\u0070assword\\\\u003d')],
  ['PEM headers and base64 lines without END', `-----BEGIN PRIVATE KEY-----\n${fill('AAAA BBBB\n')}`],
  [
    'PEM header then words, END far away',
    `-----BEGIN PRIVATE KEY-----${fill(' else')}-----END PRIVATE KEY-----`,
  ],
  ['code-shaped values', fill('token = a.b.c.d.e.f.g.h.i.j(')],
  ['call-shaped values without a closing bracket', fill('password=getToken(getToken(')],
  ['URL user parts without @', fill('://0123456789abcdef0123')],
  ['Telegram-like digits and colons', fill('123456789:A')],
  ['hex runs before -us', fill('0123456789abcdef-us')],
  ['Azure-like Q~ runs', fill('abc8Q~')],
  ['curl -u without a password', fill('curl -u user: ')],
];

describe('10 MB adversarial inputs come back', () => {
  const redact = getDefaultRedactor();
  it.each(INPUTS)('%s', (_name, input) => {
    const out = redact(input);
    expect(typeof out).toBe('string');
    // Nothing is lost wholesale: the output is the input or the input with some values replaced.
    expect(out.length).toBeGreaterThan(0);
    if (out !== input) expect(out).toContain(REDACTED);
  });
});
