import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { oneOfEachKind } from './support/secret-shapes.js';

/**
 * A key in fullwidth forms (`ｇｈｐ＿...`, `ｓｋ－ｐｒｏｊ－...`, as a CJK input method types it, or
 * a model told to slip a key past a filter writes it), or with one fullwidth character inside:
 * a reader (and NFKC) sees the ASCII key, the rules did not. No run of 8 characters of the
 * secret may be left, read as NFKC.
 */

const redact = getDefaultRedactor();
const toFullwidth = (text: string) =>
  text.replace(/[!-~]/g, (char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0));

function leftOf(secret: string, out: string): string[] {
  const seen = out.normalize('NFKC');
  const parts: string[] = [];
  for (let at = 0; at + 8 <= secret.length; at++)
    if (seen.includes(secret.slice(at, at + 8))) parts.push(secret.slice(at, at + 8));
  return parts;
}

const SECRETS = oneOfEachKind(8484).filter((planted) => planted.kind !== 'pem');

describe('keys in fullwidth forms', () => {
  it('each kind of key written all in fullwidth, in Chinese prose', () => {
    for (const planted of SECRETS) {
      const text = `部署时使用密钥${toFullwidth(planted.text)}，然后回滚。`;
      const out = redact(text);
      expect(leftOf(planted.secret, out), `${planted.kind}: ${out}`).toEqual([]);
      expect(out).toContain('部署时使用密钥');
    }
  });

  it('each kind of key with one fullwidth character in its middle', () => {
    for (const planted of SECRETS) {
      const middle = planted.text.indexOf(planted.secret) + Math.floor(planted.secret.length / 2);
      const text = `deploy with ${planted.text.slice(0, middle)}${toFullwidth(planted.text[middle]!)}${planted.text.slice(middle + 1)} now`;
      const out = redact(text);
      expect(leftOf(planted.secret, out), `${planted.kind}: ${out}`).toEqual([]);
      expect(out).toContain('deploy with');
    }
  });

  it('each kind of key with its prefix in fullwidth and the rest in ASCII', () => {
    for (const planted of SECRETS) {
      const at = planted.text.indexOf(planted.secret);
      const prefix = planted.secret.match(/^[A-Za-z0-9]*[-_.]/)?.[0] ?? planted.secret.slice(0, 4);
      const text = `deploy with ${planted.text.slice(0, at)}${toFullwidth(prefix)}${planted.text.slice(at + prefix.length)} now`;
      const out = redact(text);
      expect(leftOf(planted.secret, out), `${planted.kind}: ${out}`).toEqual([]);
    }
  });

  it('leaves CJK text with fullwidth letters, digits and punctuation as it is', () => {
    for (const text of [
      '部署脚本读取环境，检查健康端点（／ｈｅａｌｔｈ），失败时回滚！',
      'ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ in a Japanese UI label',
      '第１２３号、ＡＢＣ株式会社、ＵＲＬ：ｈｔｔｐｓ：／／ｅｘａｍｐｌｅ．ｃｏｍ',
      'ＰＡＳＳＷＯＲＤを入力してください',
      '２０２４年、ＩＤ：４２のＵＲＬ（API）を開く',
    ]) {
      expect(redact(text)).toBe(text);
    }
  });
});
