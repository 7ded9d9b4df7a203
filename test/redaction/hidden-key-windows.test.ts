import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';

/**
 * Keys in fullwidth forms or hidden by an HTML reference to an invisible character are read in
 * windows around cheap hits (src/core/redaction/hidden-key-windows.ts), not in a decoded copy of
 * the whole text: each window's matches must land on their own raw span, however far into the
 * text, and a hit far from the others must open its own window.
 */

const redact = getDefaultRedactor();
const toFullwidth = (text: string) =>
  text.replace(/[!-~]/g, (char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0));

/** Runs of 8 characters of `secret` left in `out`, read as NFKC with the references taken out. */
function leftOf(secret: string, out: string): string[] {
  const seen = out.replaceAll('&#8203;', '').replaceAll('&zwj;', '').normalize('NFKC');
  const parts: string[] = [];
  for (let at = 0; at + 8 <= secret.length; at++)
    if (seen.includes(secret.slice(at, at + 8))) parts.push(secret.slice(at, at + 8));
  return parts;
}

const FIRST = 'ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ3bC5';
const SECOND = 'glpat-Xy7Zq9Wv3Ut5Sr1Pq8No';
const THIRD = 'ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8';

describe('hidden keys read in windows', () => {
  it('keys far apart, each with its own hit, are each replaced on their own span', () => {
    const cjk = '部署脚本读取环境，检查健康端点（健康），失败时回滚！数据库连接正常。\n'.repeat(3000);
    const html = '<p>Tom &amp; Jerry&nbsp;went home &lt;b&gt; ok</p>\n'.repeat(3000);
    const text =
      `${cjk}密钥${toFullwidth(FIRST)}。\n${html}` +
      `<code>${SECOND.slice(0, 10)}&#8203;${SECOND.slice(10)}</code>\n${cjk}` +
      `<code>${THIRD.slice(0, 20)}&zwj;${THIRD.slice(20)}</code>\n${html}`;
    const out = redact(text);
    for (const secret of [FIRST, SECOND, THIRD]) expect(leftOf(secret, out), secret).toEqual([]);
    // The text around them is left as it was, in its place.
    expect(out.startsWith(`${cjk}密钥`)).toBe(true);
    expect(out.endsWith(`</code>\n${html}`)).toBe(true);
    expect(out).toContain(`。\n${html}<code>`);
    expect(out).toContain(`</code>\n${cjk}<code>`);
  });

  it('a long key with a fullwidth character near its end is replaced whole', () => {
    const key = `ghp_${'aB3dE5fG7h'.repeat(3)}J9kL1m`;
    const hidden = `${key.slice(0, -3)}${toFullwidth(key.slice(-3, -2))}${key.slice(-2)}`;
    const text = `${'x '.repeat(400)}token ${hidden} ${'部署'.repeat(400)}`;
    const out = redact(text);
    expect(leftOf(key, out)).toEqual([]);
    expect(out.startsWith(`${'x '.repeat(400)}token `)).toBe(true);
    expect(out.endsWith(` ${'部署'.repeat(400)}`)).toBe(true);
  });
});
