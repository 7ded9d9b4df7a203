import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { oneOfEachKind } from './support/secret-shapes.js';

/**
 * A key a reader sees whole but whose bytes the rules did not: an invisible character inside
 * it (a zero-width space, joiner, word joiner, byte order mark or soft hyphen, as text pasted
 * from a chat or a web page carries, or as a model told to slip a key past a filter writes it).
 * The key went out in the archive, the events and the summarizer's input with its parts intact.
 */

const redact = getDefaultRedactor();
const INVISIBLE = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad'];

/** Runs of 8 characters of `secret` left in `out` (invisible characters taken out). */
function leftOf(secret: string, out: string): string[] {
  const seen = out.replace(/[\u00ad\u200b-\u200d\u2060\ufeff]/g, '');
  const parts: string[] = [];
  for (let at = 0; at + 8 <= secret.length; at++)
    if (seen.includes(secret.slice(at, at + 8))) parts.push(secret.slice(at, at + 8));
  return parts;
}

/** The prefixed kinds, one line each (a PEM body's lines are checked on their own elsewhere). */
const SECRETS = oneOfEachKind(4242).filter((planted) => planted.kind !== 'pem');

describe('keys hidden by invisible characters', () => {
  it.each(INVISIBLE.map((char) => [`U+${char.charCodeAt(0).toString(16).padStart(4, '0')}`, char]))(
    'an invisible %s in the middle of each kind of key',
    (_name, char) => {
      for (const planted of SECRETS) {
        const middle = planted.text.indexOf(planted.secret) + Math.floor(planted.secret.length / 2);
        const text = `deploy with ${planted.text.slice(0, middle)}${char}${planted.text.slice(middle)} now`;
        const out = redact(text);
        expect(leftOf(planted.secret, out), `${planted.kind}: ${out}`).toEqual([]);
        expect(out).toContain('deploy with');
      }
    },
  );

  it.each(['\\u200b', '\\u200c', '\\u200d', '\\u2060', '\\ufeff', '\\u00ad', '\\u200B', '\\\\u200b'])(
    'a JSON escape %s in the middle of a GitHub token inside a JSON string (json.dumps writes it so)',
    (written) => {
      const secret = 'ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3bC5';
      const text = `{"note": "deploy with ${secret.slice(0, 20)}${written}${secret.slice(20)} now"}`;
      const out = redact(text);
      const seen = out.replace(/\\+u(?:200[b-d]|2060|feff|00ad)/gi, '');
      expect(leftOf(secret, seen), out).toEqual([]);
      expect(out).toContain('{"note": "deploy with ');
    },
  );

  it('leaves prose with joiners, soft hyphens and fullwidth punctuation as it is', () => {
    for (const text of [
      'family 👨\u200d👩\u200d👧 joined the channel',
      'a long hyphen\u00adated word in prose',
      '部署脚本读取环境，检查健康端点（/health），失败时回滚！',
      'ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ in a Japanese UI label',
      '\ufeff{"name": "package", "version": "1.0.0"}',
    ]) {
      expect(redact(text)).toBe(text);
    }
  });
});

describe('keys hidden by encoded invisible characters', () => {
  const secret = 'ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3bC5';
  const ENCODED = [
    '%E2%80%8B',
    '%e2%80%8c',
    '%E2%80%8D',
    '%E2%81%A0',
    '%EF%BB%BF',
    '%C2%AD',
    '&#8203;',
    '&#8203',
    '&#x200B;',
    '&#x200d;',
    '&#65279;',
    '&#173;',
    '&ZeroWidthSpace;',
    '&zwj;',
    '&zwnj;',
    '&NoBreak;',
    '&shy;',
  ];

  it.each(ENCODED)('%s in the middle of a GitHub token, in a URL query and in HTML', (written) => {
    for (const text of [
      `https://ci.example.com/hook?note=deploy&token_hint=${secret.slice(0, 20)}${written}${secret.slice(20)}&x=1`,
      `<p>deploy with <code>${secret.slice(0, 20)}${written}${secret.slice(20)}</code> now</p>`,
    ]) {
      const out = redact(text);
      const seen = out.split(written).join('');
      expect(leftOf(secret, seen), out).toEqual([]);
      expect(out).toContain(text.slice(0, 20));
    }
  });

  it('leaves text with such characters between words as it is', () => {
    for (const text of [
      'a long hyphen&shy;ated word and a&#8203;b in prose',
      'https://example.com/search?q=caf%C3%A9%E2%80%8B&lang=fr',
      '<p>Tom&zwj;&amp;&zwj;Jerry &NoBreak;2024</p>',
    ]) {
      expect(redact(text)).toBe(text);
    }
  });
});
