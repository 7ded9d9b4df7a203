import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { instructionModelDigest, parityRows } from '../../scripts/instruction-model-parity.js';
import { isDataLine, tokenCount } from '../../src/core/language/data-line.js';
import { headOf, wordsOf } from '../../src/core/language/instruction-features.js';
import {
  modalShapesOf,
  SAYS_MODAL_YOU,
  SAYS_MUST,
  SAYS_NEGATION,
  SAYS_PLEASE,
  SAYS_WANT,
  SAYS_WANT_ASKED,
  SAYS_YOU,
} from '../../src/core/language/modal-shapes.js';

// Issue 45, point 1: the instruction model made faster must say exactly what it said before.
// The fixture was written by `npx tsx scripts/instruction-model-parity.ts --write` with the model
// as it was before the speed work; write it again only when the model is meant to change.
const frozen = JSON.parse(
  readFileSync(new URL('../fixtures/instructions/model-parity.json', import.meta.url), 'utf8'),
) as Record<string, string | number>;

describe('instruction model parity', () => {
  const digest = instructionModelDigest();

  it('gives every sentence the decision it had', () => {
    expect(digest.rows).toBe(frozen.rows);
    const firstChange = [...String(digest.decisions)].findIndex((d, k) => d !== String(frozen.decisions)[k]);
    expect(firstChange).toBe(-1);
    expect(digest.assistantDecisions).toBe(frozen.assistantDecisions);
  });

  it('gives every sentence the same score, to the bit, from the same buckets', () => {
    expect(digest.features).toBe(frozen.features);
    expect(digest.scores).toBe(frozen.scores);
  });

  it('reads the same later cues and data lines', () => {
    expect(digest.cuesAndDataLines).toBe(frozen.cuesAndDataLines);
  });
});

/** The words as read before the scan of char codes: the regexes, kept here as the reference. */
function wordsByRegex(sentence: string): string[] {
  const text = headOf(sentence)
    .toLowerCase()
    .replace(/[’‘`´]/g, "'");
  const out: string[] = [];
  for (const match of text.matchAll(/[a-z]+(?:'[a-z]+)?|\d+|[,;:?!]/g)) {
    out.push(/^\d+$/.test(match[0]) ? '<num>' : match[0]);
    if (out.length >= 60) break;
  }
  return out;
}

/** The modal shapes as found before the pass over words: the regexes, kept here as the reference. */
function modalShapesByRegex(words: readonly string[]): number {
  const joined = ` ${words.join(' ')} `;
  let found = 0;
  if (/ (?:can|could|would|will) (?:you|u) /.test(joined)) found |= SAYS_MODAL_YOU;
  if (
    / (?:i'd|i would|we'd|we would) (?:like|love|prefer|rather) | i (?:want|need|wish|prefer) /.test(joined)
  )
    found |= SAYS_WANT;
  if (
    / (?:do|does|did|should|shall|must|can|could|would|will|am) (?:i|we) (?:want|need|wish|prefer|like|love) /.test(
      joined,
    )
  )
    found |= SAYS_WANT_ASKED;
  if (/ (?:please|pls|kindly) /.test(joined)) found |= SAYS_PLEASE;
  if (/ (?:don't|do not|never|dont|mustn't|shouldn't|avoid|without) /.test(joined)) found |= SAYS_NEGATION;
  if (/ (?:you|your) /.test(joined)) found |= SAYS_YOU;
  if (/ (?:must|should|has to|have to|needs to|need to) /.test(joined)) found |= SAYS_MUST;
  return found;
}

/** A data line as told before the scan of char codes: the regexes, kept here as the reference. */
function isDataLineByRegex(sentence: string): boolean {
  const head = headOf(sentence);
  if (/-{4,}\s?(?:BEGIN|END)\b/.test(head)) return true;
  const tokens = head.trim().split(/\s+/, 64).filter(Boolean);
  if (tokens.length === 0) return true;
  let words = 0;
  for (const token of tokens)
    if (/^[("'“‘*_[]*[A-Za-z]{2,}(?:['’-][A-Za-z]+)*[)"'”’.,!?;:*_\]]*$/.test(token)) words++;
  return words === 0 || words * 5 < tokens.length;
}

const EDGES = [
  '-----BEGIN RSA PRIVATE KEY-----',
  '---- END SSH2 PUBLIC KEY ----',
  '---BEGIN x',
  'MIIEowIBAAKCAQEA7V8b3kq9ZxYw2c1f0d9a8s7d6f5g4h3j2k1l0QWERTYuiop',
  'a1 b2 c3 d4 e5 ok',
  "(\"'“‘*_[word]_*’”'\").,!?;:  'x' x- -x ab-cd ab’cd ab''cd ab'-cd A1 ab1 \u00a0ab\u2003cd\u3000ef\ufeffgh\u180eij",
  '\t\n\v\f\r ab \u2028 cd \u2029 ef \u1680 gh \u202f ij \u205f kl \u0085 mn',
  `${'x1 '.repeat(70)}word`,
  `${'word '.repeat(63)}x1 x2 x3`,
  "Don`t use rock'n'roll, ok? I´d like 12abc34 and İstanbul’s KELVIN-K ‘quoted’ it's",
  "a' 'b don' t ''x' y''z 007, 3.14; x:y! can't?",
  'We would rather you did. We would like it. I would prefer tea; i need u. Can u? Will you!',
  'Do I want it? Am we like? Shall i love it. Could we wish? Must I need to? Does we prefer',
  'Do not go. do  not. You have to; he has to; it needs to; I need to; should; must',
  'please pls kindly avoid without never dont mustn’t shouldn’t your yours u',
  `${'word '.repeat(70)}end`,
  '',
  '   ',
  '¿Qué? ¡Sí! ÀÉÎ ﬁle ǅ',
];

describe('the scans that replaced regexes', () => {
  const texts = [...parityRows().map((row) => row.text), ...EDGES];

  it('read the same words as the regexes did', () => {
    for (const text of texts) expect(wordsOf(text), text).toEqual(wordsByRegex(text));
  });

  it('tell the same data lines as the regexes did', () => {
    for (const text of texts) expect(isDataLine(text), text).toBe(isDataLineByRegex(text));
  });

  it('count tokens as splitting on white space did', () => {
    for (const text of texts)
      expect(tokenCount(headOf(text), 4), text).toBe(
        Math.min(4, headOf(text).trim().split(/\s+/).filter(Boolean).length),
      );
  });

  it('find the same modal shapes as the regexes did', () => {
    for (const text of texts) {
      const words = wordsOf(text);
      expect(modalShapesOf(words), text).toBe(modalShapesByRegex(words));
    }
  });
});
