/**
 * Letters a reader takes for Latin ones in a key's name or a token (`раssword=` with a Cyrillic
 * `а` and `р`, `𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝=` in mathematical bold, `ghр_...`): read as their Latin letter in the
 * decoded copy (find-decoded.ts), found by hidden-key-windows.ts. The table is the letters and
 * digits of Latin Extended, IPA, Greek, Cyrillic, Armenian and the Letterlike Symbols that
 * Unicode's confusables.txt (UTS #39) maps to one ASCII letter or digit. It is written here (a
 * runtime dependency of 100 KB for 150 entries is not worth it) and checked against the map of
 * the `unhomoglyph` package (Unicode 13.0, MIT), vendored in test/fixtures/redaction/confusables
 * (test/redaction/look-alike-table.test.ts lists each letter added in secrets-88).
 */

/** The first and past the last code of the BMP table (Latin Extended-A to Armenian). */
export const LOOK_ALIKE_START = 0x100;
export const LOOK_ALIKE_END = 0x590;

/** The Letterlike Symbols and Number Forms (the mathematical letters' holes, `ℎ`; Roman numerals). */
const LETTERLIKE_START = 0x2100;
const LETTERLIKE_END = 0x2180;

/** Look-alike BMP letters and digits and the ASCII character each stands for, by block. */
const PAIRS =
  // Latin Extended-A and -B, IPA.
  'ıiſfƄbƍgƖlƦRƧ2Ʒ3Ƽ5ƽsǀlȜ3Ȣ8ȣ8ɑaɡgɣyɩiɪiɯwʋuʏy' +
  // Greek.
  'ΑAΒBΕEΖZΗHΙIΚKΜMΝNΟOΡPΤTΥYΧXαaγyιiκkνvοoρpσoυuϒYϜFϨ2ϱpϲcϳjϹCϺMͿJ' +
  // Cyrillic and its supplement.
  'ЅSІIЈJАAВBЕEЗ3КKМMНHОOРPСCТTУYХXЬbаaб6гrеeоoрpсcуyхxѕsіiјjѡwѴVѵvһhҽeҮYүyӀlӏiӠ3ԁdԌGԛqԜWԝw' +
  // Armenian.
  'ՍUՏSՕOաwգqհhոnռnսuցgքfօoզq' +
  // Letterlike Symbols and Number Forms.
  'ℂCℊgℋHℌHℍHℎhℐIℑIℒLℓlℕNℙPℚQℛRℜRℝRℤZ\u212aKℨZℬBℭCℯeℰEℱFℳMℴoℹiⅅDⅆdⅇeⅈiⅉj℮eℽy' +
  'ⅠIⅤVⅩXⅬLⅭCⅮDⅯMⅰiⅴvⅹxⅼlⅽcⅾd';

const TABLE = new Uint8Array(LOOK_ALIKE_END - LOOK_ALIKE_START);
const LETTERLIKE = new Uint8Array(LETTERLIKE_END - LETTERLIKE_START);

function setPair(code: number, latin: number): void {
  if (code >= LOOK_ALIKE_START && code < LOOK_ALIKE_END) TABLE[code - LOOK_ALIKE_START] = latin;
  else if (code >= LETTERLIKE_START && code < LETTERLIKE_END) LETTERLIKE[code - LETTERLIKE_START] = latin;
}

for (let index = 0; index + 1 < PAIRS.length; index += 2) {
  setPair(PAIRS.charCodeAt(index), PAIRS.charCodeAt(index + 1));
}

/** The ASCII letter or digit a look-alike BMP character stands for, or 0. */
export function lookAlikeLetter(code: number): number {
  if (code < LOOK_ALIKE_END) return code >= LOOK_ALIKE_START ? TABLE[code - LOOK_ALIKE_START]! : 0;
  return code >= LETTERLIKE_START && code < LETTERLIKE_END ? LETTERLIKE[code - LETTERLIKE_START]! : 0;
}

/**
 * The characters below U+0250 and in the Letterlike Symbols that the table holds, as a regex
 * class body: with the blocks from U+0250 to {@link LOOK_ALIKE_END} and the mathematical
 * letters' high surrogate, the gate of a look for disguised names (hidden-key-windows.ts), which
 * European prose with accents (`é`, `ł`, `ş`) does not open.
 */
export const SPARSE_LOOK_ALIKES: string = [...PAIRS]
  .filter((_, index) => index % 2 === 0)
  .filter((char) => char.charCodeAt(0) < 0x250 || char.charCodeAt(0) >= LETTERLIKE_START)
  .map((char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
  .join('');

/** The Greek letter (U+0391 to U+03C9) a mathematical Greek letter stands for, by its place in a style of 58. */
function mathGreek(place: number): number {
  if (place < 25) return 0x391 + place;
  if (place >= 26 && place < 51) return 0x3b1 + place - 26;
  // ϵ ϑ ϰ ϕ ϱ ϖ after the partial differential.
  return place === 56 ? 0x3f1 : 0;
}

/**
 * The ASCII letter or digit a mathematical alphanumeric symbol (U+1D400 to U+1D7FF, written as
 * the surrogate pair `high`, `low`) stands for, or 0: 13 letter styles of 52 (A-Z, a-z; the
 * holes of the block are unassigned, their letters are in the Letterlike Symbols), the dotless
 * `𝚤` and `𝚥`, 5 Greek styles of 58 read through the table (`𝛂` is `a`, `𝚨` is `A`), the bold
 * digamma `𝟊`, 5 digit styles of 10.
 */
export function mathAlphanumeric(high: number, low: number): number {
  if (high !== 0xd835 || low < 0xdc00 || low > 0xdfff) return 0;
  const offset = low - 0xdc00;
  if (offset < 13 * 52) {
    const letter = offset % 52;
    return letter < 26 ? 65 + letter : 97 + letter - 26;
  }
  if (offset === 0x2a4) return 105;
  if (offset === 0x2a5) return 106;
  if (offset >= 0x2a8 && offset < 0x2a8 + 5 * 58) return lookAlikeLetter(mathGreek((offset - 0x2a8) % 58));
  if (offset === 0x3ca) return 70;
  return offset >= 0x3ce ? 48 + ((offset - 0x3ce) % 10) : 0;
}
