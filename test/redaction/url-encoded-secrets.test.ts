import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';

/**
 * A URL inside a URL is percent-encoded: an OAuth redirect (`redirect_uri=...%3Faccess_token%3D...`),
 * a login's `next=` parameter, a git remote passed as a query value, a form body logged as it
 * was sent. The rules read `password%3D...` as one word and `https%3A%2F%2Fuser%3Apw%40host` as no
 * URL at all: the secret went out whole. Percent escapes of printable ASCII characters are now
 * read decoded, as JSON's `\u00XX` escapes are (a quote and a backslash stay encoded).
 */

const redact = getDefaultRedactor();

// Built at test time: no key is written whole in the repository.
const TOKEN = ['Zx81', 'kLm02', 'PqRs7', 'Tu4Vw9'].join('');
const PASSWORD = ['Hq7', 'Wm2', 'Xr9', 'Kv4'].join('');

describe('secrets in percent-encoded URLs', () => {
  it.each([
    [
      'an access token in an encoded redirect',
      `GET /authorize?redirect_uri=${encodeURIComponent(`https://app.example.com/cb?access_token=${TOKEN}&state=ab12`)}`,
      TOKEN,
    ],
    [
      "a git remote's password passed as a query value",
      `POST /mirror?source=${encodeURIComponent(`https://deploy:${PASSWORD}@git.example.com/team/repo.git`)} 200`,
      PASSWORD,
    ],
    ['a logged form body', `body: ${encodeURIComponent(`user=ci&password=${PASSWORD}!`)}`, PASSWORD],
  ])('%s', (_name, text, secret) => {
    // The test can fail: the secret is in the input.
    expect(text).toContain(secret);
    const out = redact(text);
    expect(out, out).not.toContain(secret.slice(0, 8));
    expect(out).not.toContain(secret.slice(-8));
  });

  it('inside JSON tool arguments as well', () => {
    const url = `https://sso.example.com/login?next=${encodeURIComponent(`/home?api_key=${TOKEN}`)}`;
    const out = redact(JSON.stringify({ arguments: JSON.stringify({ url }) }));
    expect(out).not.toContain(TOKEN.slice(0, 8));
    expect(JSON.parse(JSON.parse(out).arguments).url).toContain('https://sso.example.com/login?next=');
  });

  it('leaves encoded text without a secret as it is', () => {
    for (const text of [
      'GET /search?q=rust%20borrow%20checker&page=2 200 12ms',
      `redirect_uri=${encodeURIComponent('https://app.example.com/callback?state=xyz')}`,
      'coverage went from 81% to 93%; 100%25 is a literal percent',
      'path=%2Fsrv%2Fapp%2Fsecrets%2Fconfig.yaml',
    ]) {
      expect(redact(text)).toBe(text);
    }
  });
});
