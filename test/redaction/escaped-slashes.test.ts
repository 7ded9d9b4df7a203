import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';

/**
 * JSON may escape every slash (`\/`): PHP's `json_encode` does by default, and Slack's Web API
 * answers that way, so a tool result of `curl https://slack.com/api/...` carries
 * `https:\/\/hooks.slack.com\/services\/...`. The rules stopped a key at its first `\` (a
 * Grafana `glc_` or 1Password `ops_` key's base64 holds `/`): the rest of the key went out
 * whole, and a URL's credentials or a Slack webhook written with `\/` were not seen at all.
 */

const redact = getDefaultRedactor();
const escapeSlashes = (text: string) => text.replaceAll('/', '\\/');

/** No run of 8 characters of `secret` is left in `out`. */
function leftOf(secret: string, out: string): string[] {
  const parts: string[] = [];
  for (let at = 0; at + 8 <= secret.length; at++) {
    const part = secret.slice(at, at + 8);
    if (out.includes(part)) parts.push(part);
  }
  return parts;
}

// Built at test time: no key is written whole in the repository.
const base64 = 'Qm9yaXNfMjAyNl9rZXkvbWF0ZXJpYWwrd2l0aC9zbGFzaGVzL2luL2l0L2FuZC9tb3Jl';
const SECRETS = {
  grafana: `glc_${base64.slice(0, 20)}/${base64.slice(20, 44)}+${base64.slice(44)}/Zz==`,
  onePassword: `ops_eyJ${base64.slice(0, 30)}/${base64}${base64.slice(3)}/abc`,
  slackHook: ['T0', '4KQ7Z9X1M/B0', '6P2R8W4N/', 'Xy7Kp2Lm9Qr4St6Uv8Wz1Ab3'].join(''),
  dbPassword: ['Zq8', 'vN2', 'xR7', 'tL4', 'mW9'].join(''),
};

describe('secrets in JSON with escaped slashes', () => {
  it.each([
    ['a Grafana Cloud token', `{"ok":true,"token":"${escapeSlashes(SECRETS.grafana)}"}`, SECRETS.grafana],
    [
      'a 1Password service account token',
      `{"value":"${escapeSlashes(SECRETS.onePassword)}"}`,
      SECRETS.onePassword,
    ],
    [
      'a Slack webhook',
      `{"ok":true,"incoming_webhook":{"url":"${escapeSlashes(`https://hooks.slack.com/services/${SECRETS.slackHook}`)}"}}`,
      SECRETS.slackHook.slice(SECRETS.slackHook.lastIndexOf('/') + 1),
    ],
    [
      "a URL's password",
      `{"url":"${escapeSlashes(`postgres://deploy:${SECRETS.dbPassword}@db.internal:5432/app`)}"}`,
      SECRETS.dbPassword,
    ],
  ])('%s loses every part of it', (_name, text, secret) => {
    // The test can fail: the secret is in the input, escaped slashes and all.
    expect(leftOf(secret, text.replaceAll('\\/', '/')).length).toBeGreaterThan(0);
    const out = redact(text);
    expect(leftOf(secret, out.replaceAll('\\/', '/')), out).toEqual([]);
    // The JSON stays JSON.
    expect(() => JSON.parse(out)).not.toThrow();
  });

  it('inside JSON-encoded tool arguments (escaped once more) as well', () => {
    const inner = `{"url":"${escapeSlashes(`postgres://deploy:${SECRETS.dbPassword}@db.internal:5432/app`)}"}`;
    const out = redact(JSON.stringify({ arguments: inner }));
    expect(leftOf(SECRETS.dbPassword, out), out).toEqual([]);
    expect(JSON.parse(JSON.parse(out).arguments).url).toContain('db.internal:5432');
  });

  it('leaves text with escaped slashes and no secret as it is', () => {
    for (const text of [
      String.raw`{"url":"https:\/\/example.com\/docs\/api","path":"src\/core\/redaction"}`,
      String.raw`const pattern = /https?:\/\/[a-z.]+\/path/;`,
      String.raw`{"avatar":"https:\/\/avatars.slack-edge.com\/2026-01-01\/123_48.png"}`,
    ]) {
      expect(redact(text)).toBe(text);
    }
  });
});
