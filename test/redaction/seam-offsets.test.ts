import { describe, expect, it } from 'vitest';
import { MESSAGE_CODECS } from '../../src/core/messages/formats/detect-format.js';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { blockSeams, crossingSeams, redactJoined } from '../../src/core/redaction/split-secrets.js';
import { archivedTextsOf } from './support/archived-texts.js';
import { leakFinder } from './support/secret-shapes.js';

/**
 * secrets-88: `redactJoined` found each seam with `indexOf` from the last one, so a seam whose
 * text is also found earlier (a tool printed the whole token, then a second call printed its
 * first half, the rest in the next message) was cut there, in a token already redacted, and
 * the split one went out in halves. Seams now carry where they are in the text.
 */

const redact = getDefaultRedactor();
const GITHUB = 'ghp_x7Kq2M9vTz4Lw8Rj3Nc6Pb1Yd5Hf0Gs2Ua7E';
const find = leakFinder([{ kind: 'github', secret: GITHUB, text: GITHUB }], 8);

const codec = MESSAGE_CODECS.anthropic;
const raws: Record<string, unknown>[] = [
  { role: 'user', content: 'print the token twice, please.' },
  {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'toolu_1', name: 'read', input: {} },
      { type: 'tool_use', id: 'toolu_2', name: 'read', input: {} },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'toolu_1', content: `printed ${GITHUB} once` },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: GITHUB.slice(0, 20) },
    ],
  },
  { role: 'user', content: `${GITHUB.slice(20)} is the rest of it` },
];
/** The artifacts of a cascade that folded some messages and cleared others, as the archive redacts them. */
const archived = archivedTextsOf(raws, 'anthropic', redact, 'cleared');

describe('a seam whose text is found earlier in the joined text', () => {
  it('holds the whole token and its halves (the test can fail)', () => {
    expect(find(JSON.stringify(raws)).length).toBeGreaterThanOrEqual(2);
  });

  it('cuts a cleared original at its own last result, not in the first', () => {
    const [original] = archived([], [2]);
    // The last result's half is redacted alone too: the cut reaches that change, and the text
    // before it is redacted again alone, so the words after the whole token stay.
    expect(original).toContain('printed <REDACTED> once');
    expect(find(original!)).toEqual([]);
  });

  it('cuts sum-vN at the last result, not in the first', () => {
    const [summary] = archived([0, 1, 2]);
    expect(summary).toContain('[2] result: printed <REDACTED> once');
    expect(find(summary!)).toEqual([]);
  });

  it('gives a block seam its place while the blocks before it are text blocks', () => {
    const tail = `key ${GITHUB.slice(0, 20)}`;
    const head = `${GITHUB.slice(20)} ok`;
    const raw = {
      role: 'user',
      content: [
        { type: 'text', text: 'first' },
        { type: 'text', text: tail },
        { type: 'text', text: head },
        { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
        { type: 'text', text: tail },
        { type: 'text', text: head },
      ],
    };
    const text = codec.parse(raw, 0).text;
    const seams = crossingSeams(blockSeams(raw), redact);
    // The image reads `[image]` in the text: past it the seam is searched for.
    expect(seams.map((seam) => seam.start)).toEqual([6, undefined]);
    expect(text.startsWith(`${tail}\n${head}`, 6)).toBe(true);
    expect(find(redactJoined(text, seams, redact))).toEqual([]);
  });
});
