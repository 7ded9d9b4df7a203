/**
 * A private key flattened onto one line and clipped (no END line), as a summary's line quotes a
 * pasted key: the body after the header is key material. Found through every-sink.test.ts with
 * `redactSummarizerInput` off, where such a line reached the events.
 */
import { describe, expect, it } from 'vitest';
import { createRedactor } from '../../src/core/redaction/redactor.js';

const BODY = [
  'Rr5z/AZgyML5eDHBGhjNjTECAg/UU6hz9GoUJ9Y3iNka69rBKi7jrrVwaNw9evzC',
  'H4DbraERpoZhwpjmkeyhSDH43TlWeXpngi3LcnwZtpPz4cotTrJXFJ+E/YDltxxy',
  'GXobn+JDjQlkypE6zDlv',
];

describe('a flattened, clipped private key', () => {
  const redact = createRedactor();

  it('is redacted whole, the text after it kept', () => {
    const out = redact(`- user: -----BEGIN RSA PRIVATE KEY----- ${BODY.join(' ')}\n- next: ok`);
    for (const part of BODY) expect(out).not.toContain(part.slice(0, 12));
    expect(out).toContain('- next: ok');
  });

  it('leaves the header alone when prose follows it (code that names the marker)', () => {
    const code = "const header = '-----BEGIN RSA PRIVATE KEY----- and more prose';";
    expect(redact(code)).toBe(code);
  });
});
