/**
 * Issue 47 point 2: the first tool result a compaction cleared held the loop 23-32 ms, ICU
 * loading the en-US number format for the placeholder's count. Placeholders and cut markers
 * now write their counts without it, the same text.
 */
import { describe, expect, it, vi } from 'vitest';
import { formatCount } from './format-count.js';
import { clearedPlaceholder, cutMarker } from './preflight/view/realize-rewrite.js';

describe('formatCount', () => {
  it("writes what toLocaleString('en-US') writes", () => {
    const values = [0, -0, 1, 9, 10, 99, 100, 999, 1000, 1001, 12_345, 999_999, 1_000_000, 123_456_789];
    for (let n = 1; n < 2 ** 53; n = n * 7 + 3) values.push(n, -n);
    values.push(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 60, 1.5, -2.25, Number.NaN, Infinity);
    for (const n of values) expect(formatCount(n)).toBe(n.toLocaleString('en-US'));
  });

  it('is what placeholders and cut markers use: no number format is loaded for them', () => {
    const spy = vi.spyOn(Number.prototype, 'toLocaleString');
    try {
      expect(clearedPlaceholder('read_file', 1_234_567, 'ref-1', 'see PROJ-12 in src/a.ts')).toBe(
        '[cleared: read_file output, 1,234,567 chars; ids: PROJ-12, src/a.ts; recall "ref-1"]',
      );
      expect(cutMarker(12_345, undefined)).toBe('[agent-compaction: 12,345 chars cut here]');
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});
