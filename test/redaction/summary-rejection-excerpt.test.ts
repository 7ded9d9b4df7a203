import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { describeSummaryRejection } from '../../src/core/summary/summary-guard.js';

/**
 * A rejected summary is quoted in its `compact.error` event (100 characters), and the event is
 * redacted after: a key the excerpt cut in its middle lost the shape its rule knows, and its
 * first part went out (with `redactSummarizerInput: false`, when the summarizer saw the key).
 * The excerpt now ends at a blank.
 */

const redact = getDefaultRedactor();
// Built at test time: no key is written whole in the repository (gitleaks' adobe-client-secret).
const ADOBE = ['p8e-', 'l9jcm93rfms93qtt', '60s37n9a62zu146k'].join('');

describe("a rejected summary's excerpt", () => {
  it('never ends inside a key', () => {
    for (let pad = 40; pad < 100; pad++) {
      const output = `${'x'.repeat(pad)} use ${ADOBE} for the upload, then continue`;
      // The test can fail: the whole key is caught, a cut one is not.
      expect(redact(output)).not.toContain(ADOBE.slice(4, 12));
      const message = redact(describeSummaryRejection('no_structure', output, 'task_state'));
      expect(message, message).not.toContain(ADOBE.slice(4, 12));
      expect(message).toContain('…');
    }
  });

  it('keeps the words that fit', () => {
    const message = describeSummaryRejection(
      'refusal',
      `I cannot help with that request. ${'more words '.repeat(20)}`,
      'x',
    );
    expect(message).toContain('I cannot help with that request. more words');
    expect(message).toMatch(/ words…"$/);
  });
});
