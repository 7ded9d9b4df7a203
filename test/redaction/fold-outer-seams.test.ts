import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { archivedTextsOf } from './support/archived-texts.js';
import { leakFinder } from './support/secret-shapes.js';

/**
 * review-87a: a secret split over a message the archive holds and one it does not (a message
 * kept between two folded ones, the first message kept after the fold, the tool result after
 * an archived original whose text its own call follows): the archived half is cut across
 * that seam, as the summarizer's slice is (run-cascade.ts, `cutOuterSeams`).
 */

const redact = getDefaultRedactor();
const OPENAI = 'sk-proj-Qx7Lm2Vb9Kt4Rw8Zn3Pc6Hd1Yf5Js0Ga2Ue7Tb4Nk9Mq3Wv';
const GITHUB = 'ghp_x7Kq2M9vTz4Lw8Rj3Nc6Pb1Yd5Hf0Gs2Ua7E';
const find = leakFinder(
  [
    { kind: 'openai', secret: OPENAI, text: OPENAI },
    { kind: 'github', secret: GITHUB, text: GITHUB },
  ],
  8,
);
const call = (id: string) => ({ id, type: 'function', function: { name: 'read', arguments: '{}' } });

function history(): Record<string, unknown>[] {
  return [
    { role: 'user', content: 'deploy the service and keep the logs.' },
    { role: 'user', content: `use my key ${OPENAI.slice(0, 22)}` },
    { role: 'user', content: `${OPENAI.slice(22)} for the summaries` },
    { role: 'assistant', content: `the bot token is ${GITHUB.slice(0, 10)}`, tool_calls: [call('call_1')] },
    { role: 'tool', tool_call_id: 'call_1', content: `${GITHUB.slice(10)}\nthe host is db.internal.` },
    { role: 'user', content: 'thanks' },
  ];
}

/** The artifacts of a cascade that folded some messages and cut others, as the archive redacts them. */
const archived = archivedTextsOf(history(), 'openai-chat', redact, 'cut');

describe('a secret split over an archived message and one the archive does not hold', () => {
  it('holds both secrets split (the test can fail)', () => {
    expect(find(JSON.stringify(history())).length).toBeGreaterThanOrEqual(2);
  });

  it('cuts sum-vN where a kept message sits between two folded ones', () => {
    const [summary] = archived([0, 2, 3, 4]);
    expect(summary).toContain('[0] user: deploy the service');
    expect(summary).toContain('for the summaries');
    expect(summary).toContain('[4] result: ');
    expect(find(summary!)).toEqual([]);
  });

  it('cuts sum-vN where the first kept message after the fold holds the rest', () => {
    const [summary] = archived([0, 1, 2, 3]);
    expect(summary).toContain('[3] call read({})');
    expect(find(summary!)).toEqual([]);
  });

  it("cuts an original whose text its own tool call follows, at the next message's seam", () => {
    const [original] = archived([], [3]);
    expect(original).toContain('the bot token is');
    expect(original).toContain('read({})');
    expect(find(original!)).toEqual([]);
  });
});
