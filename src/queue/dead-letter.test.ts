import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../core/redaction/redactor.js';
import { clip } from './dead-letter.js';

describe('clip (a failed job error told to onJobDone and the dead letter)', () => {
  it('redacts before it cuts: no part of a secret the 500th character falls in survives', () => {
    const redact = createRedactor();
    const secret = createHash('sha256').update('dead-letter-clip').digest('hex').repeat(2);
    for (const kept of [4, 8, 11, 20]) {
      const head = `summarizer failed: the provider answered 400 for the request `.padEnd(
        500 - 'SECRET_KEY_BASE='.length - kept,
        '.',
      );
      const message = `${head}SECRET_KEY_BASE=${secret} and more`;
      // The test can fail: the cut falls inside the secret.
      expect(message.slice(0, 500).endsWith(secret.slice(0, kept))).toBe(true);
      const told = clip(message, redact);
      expect(told.length).toBeLessThanOrEqual(500);
      expect(told.includes(secret.slice(0, 4)), `${kept} characters kept`).toBe(false);
    }
  });
});
