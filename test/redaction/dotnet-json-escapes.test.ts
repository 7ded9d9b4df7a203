import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';

/**
 * .NET's System.Text.Json writes a quote inside a string as `\u0022`, and `'`, `+`, `<`, `>`,
 * `&` and a backtick as `\u0027`, `\u002B`, ...: a .NET service's JSON answer (a tool result)
 * holds `"config":"client_secret = \u0022...\u0022"`. The unicode-escape pass left those
 * quotes and apostrophes escaped, so a quoted value after its key and a key between
 * apostrophes (`\u0027api_org_...\u0027`) were not seen.
 */

const redact = getDefaultRedactor();

/** What System.Text.Json writes for `value` (its default encoder). */
function dotnetJson(value: unknown): string {
  return JSON.stringify(value)
    .replaceAll('\\"', '\\u0022')
    .replace(/['+<>&`]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`);
}

function leftOf(secret: string, out: string): string[] {
  const parts: string[] = [];
  for (let at = 0; at + 8 <= secret.length; at++)
    if (out.includes(secret.slice(at, at + 8))) parts.push(secret.slice(at, at + 8));
  return parts;
}

// Built at test time: no key is written whole in the repository.
const HF = ['api_org_', 'lYqIcVkErv', 'SNFcroWzxl', 'rUNNdTZrfUvHBz'].join('');
const AZURE = ['2Vq7Q~q5Vg', 'KljZ7cb3.0', 'sp0Apz.vOjRIPyeTr'].join('');
const PASSWORD = ['Xk9', '#mQ2', 'vL7', '!pR4'].join('');

describe('secrets in JSON written by .NET (quotes as \\u0022)', () => {
  it.each([
    ['a key between apostrophes', `os.environ['HF_HUB'] = '${HF}'`, HF],
    ['an Azure client secret after -ClientSecret', `Connect -ClientId 'app' -ClientSecret '${AZURE}'`, AZURE],
    [
      'a quoted password after its key',
      `settings: password = "${PASSWORD}" (from appsettings.json)`,
      PASSWORD,
    ],
  ])('%s', (_name, line, secret) => {
    const text = dotnetJson({ Message: line, Level: 'Information' });
    // The test can fail: the secret is in the input.
    expect(leftOf(secret, JSON.parse(text).Message).length).toBeGreaterThan(0);
    const out = redact(text);
    expect(leftOf(secret, JSON.parse(out).Message), out).toEqual([]);
    // Inside JSON-encoded tool arguments (escaped once more) as well.
    const nested = redact(JSON.stringify({ output: text }));
    expect(leftOf(secret, JSON.parse(JSON.parse(nested).output).Message), nested).toEqual([]);
  });

  it('leaves such JSON without a secret as it is', () => {
    for (const line of [
      `if (a < b && c > d) return 'ok' + "done";`,
      'the `token` field is required',
      `{"password": "${'<'}REDACTED>"} means nothing`,
    ]) {
      const text = dotnetJson({ Message: line });
      expect(redact(text)).toBe(text);
    }
  });
});
