/**
 * Letters a reader takes for Latin ones in a key's name (`раssword=` with a Cyrillic `а` and `р`,
 * `𝐩𝐚𝐬𝐬𝐰𝐨𝐫𝐝=` in mathematical bold): read as their Latin letter in the decoded copy
 * (find-decoded.ts), found by hidden-key-windows.ts. The table is the Cyrillic, Greek and Latin
 * letters that Unicode's confusables.txt (UTS #39) maps to one ASCII letter, by hand (review-86a).
 */

/** Look-alike BMP letters (U+0250 to U+052F) and the ASCII letter each stands for. */
const PAIRS =
  'ɡg' +
  'ΑAΒBΕEΖZΗHΙIΚKΜMΝNΟOΡPΤTΥYΧXαaιiκkνvοoρpυu' +
  'ЅSІIЈJАAВBЕEКKМMНHОOРPСCТTХXаaеeоoрpсcуyхxѕsіiјjһhӏlԁdԛqԝw';

const TABLE = new Uint8Array(0x530 - 0x250);
for (let index = 0; index < PAIRS.length; index += 2) {
  TABLE[PAIRS.charCodeAt(index) - 0x250] = PAIRS.charCodeAt(index + 1);
}

/** The ASCII letter a look-alike BMP letter stands for, or 0. */
export function lookAlikeLetter(code: number): number {
  return code >= 0x250 && code < 0x530 ? TABLE[code - 0x250]! : 0;
}

/**
 * The ASCII letter or digit a mathematical alphanumeric symbol (U+1D400 to U+1D7FF, written as
 * the surrogate pair `high`, `low`) stands for, or 0: 13 letter styles of 52 (A-Z, a-z; the
 * holes of the block are unassigned), Greek in between (0), 5 digit styles of 10.
 */
export function mathAlphanumeric(high: number, low: number): number {
  if (high !== 0xd835 || low < 0xdc00 || low > 0xdfff) return 0;
  const offset = low - 0xdc00;
  if (offset < 13 * 52) {
    const letter = offset % 52;
    return letter < 26 ? 65 + letter : 97 + letter - 26;
  }
  return offset >= 0x3ce ? 48 + ((offset - 0x3ce) % 10) : 0;
}
