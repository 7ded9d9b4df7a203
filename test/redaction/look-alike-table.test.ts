import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lookAlikeLetter, mathAlphanumeric } from '../../src/core/redaction/look-alike-letter.js';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';

/**
 * secrets-88: the look-alike table (look-alike-letter.ts) checked against Unicode's confusables
 * (the map of the `unhomoglyph` package, Unicode 13.0, MIT, vendored in
 * test/fixtures/redaction/confusables): every character of a block the redactor reads as Latin
 * that confusables.txt takes for an ASCII letter or digit is read as one with the same skeleton.
 * The table had no Cyrillic `Ү` (U+04AE) nor the 67 other letters and digits listed in `ADDED`,
 * the Letterlike Symbols and Roman numerals, nor the Greek mathematical letters (`𝚨`).
 */

const { entries } = JSON.parse(
  readFileSync(new URL('../fixtures/redaction/confusables/ascii-confusables.json', import.meta.url), 'utf8'),
) as { entries: Record<string, string> };

/** What confusables.txt reads a character as (itself when it has no entry). */
const skeleton = (char: string) =>
  entries[char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')] ?? char;

/** The ASCII character the redactor reads `char` as, or '' (fullwidth forms are read by arithmetic). */
function readAs(char: string): string {
  const code = char.codePointAt(0)!;
  if (code >= 0xff01 && code <= 0xff5e) return String.fromCharCode(code - 0xfee0);
  const latin =
    code > 0xffff ? mathAlphanumeric(char.charCodeAt(0), char.charCodeAt(1)) : lookAlikeLetter(code);
  return latin > 0 ? String.fromCharCode(latin) : '';
}

/** The blocks the redactor reads as Latin: Latin Extended to Armenian, Letterlike Symbols, fullwidth, mathematical. */
const handled = (code: number) =>
  (code >= 0x100 && code < 0x590) ||
  (code >= 0x2100 && code < 0x2180) ||
  (code >= 0xff01 && code <= 0xff5e) ||
  (code >= 0x1d400 && code < 0x1d800);

/** Not letters or digits, left out: the ogonek (U+02DB) and the iota below (U+037A), spacing marks. */
const MARKS = new Set(['\u02db', '\u037a']);

/** The characters secrets-88 added, each with the ASCII character it is read as. */
const ADDED =
  'ıiſfƄbƍgƖlƦRƧ2Ʒ3Ƽ5ƽsǀlȜ3Ȣ8ȣ8ɑaɣyɩiɪiɯwʋuʏy' +
  'γyσoϒYϜFϨ2ϱpϲcϳjϹCϺMͿJ' +
  'З3УYЬbб6гrѡwѴVѵvҽeҮYүyӀlӏiӠ3ԌGԜW' +
  'ՍUՏSՕOաwգqհhոnռnսuցgքfօoզq' +
  'ℎhℬBℊgℓlℂC℮eℽy';

describe('the look-alike table', () => {
  it('reads every confusable of the blocks it reads as a letter with the same skeleton', () => {
    const wrong: string[] = [];
    let checked = 0;
    for (const [hex, latin] of Object.entries(entries)) {
      const code = Number.parseInt(hex, 16);
      const char = String.fromCodePoint(code);
      if (!handled(code) || MARKS.has(char)) continue;
      checked++;
      const read = readAs(char);
      if (read === '' || skeleton(read) !== latin)
        wrong.push(`${char} U+${hex} reads '${read}', not '${latin}'`);
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(990);
  });

  it('has each letter secrets-88 added', () => {
    const missing: string[] = [];
    for (let index = 0; index < ADDED.length; index += 2) {
      const char = ADDED[index]!;
      if (readAs(char) !== ADDED[index + 1]) missing.push(`${char} U+${char.charCodeAt(0).toString(16)}`);
    }
    expect(missing).toEqual([]);
  });

  it('reads the Greek mathematical letters and the holes of the block (`ℎ`)', () => {
    expect(readAs('𝚨')).toBe('A');
    expect(readAs('𝛒')).toBe('p');
    expect(readAs('𝚤')).toBe('i');
    expect(readAs('𝛁')).toBe('');
  });

  const redact = getDefaultRedactor();
  const VALUE = 'Zx9Qw7Lm3Vb8Kt2Rp4';
  it.each([
    ['Cyrillic Ү', 'АРІ_КЕҮ'],
    ['Cyrillic У', 'АРІ_КЕУ'],
    ['italic with the Letterlike ℎ', '𝑎𝑢𝑡ℎ'],
    ['Armenian օ and ս', 'аսtհ_tօken'],
  ])('redacts the value of a key named with %s', (_, name) => {
    const out = redact(`the deploy notes say ${name}=${VALUE} and more`);
    expect(out).not.toContain(VALUE.slice(0, 8));
    expect(out).toContain('the deploy notes say');
  });
});
