import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED, redactThenClip } from '../../src/core/redaction/redactor.js';
import { anySecret, leakFinder, oneOfEachKind, SECRET_SHAPES } from './support/secret-shapes.js';

const redact = createRedactor();

/** How a clipped secret reaches a sink: the cut alone, with an ellipsis, inside a summary line. */
const contexts = [
  (cut: string) => cut,
  (cut: string) => `${cut}…`,
  (cut: string) => `[3] shell :: run it :: ${cut}… :: exit 0\n[4] read_file :: ok`,
];

describe('a secret cut anywhere is still redacted', () => {
  it.each(Object.keys(SECRET_SHAPES))('%s: raw text, cut at every offset', (kind) => {
    fc.assert(
      fc.property(SECRET_SHAPES[kind]!, (planted) => {
        const find = leakFinder([planted]);
        const text = `run: ${planted.text} now`;
        for (let end = 0; end <= text.length; end++) {
          for (const wrap of contexts) {
            const leaks = find(redact(wrap(text.slice(0, end))));
            if (leaks.length > 0) throw new Error(`cut at ${end}: ${leaks.join(', ')}`);
          }
        }
      }),
      { numRuns: 15 },
    );
  });

  it('inside JSON-encoded tool arguments, cut at every offset', () => {
    fc.assert(
      fc.property(anySecret, fc.constantFrom('cmd', 'content', 'env'), (planted, field) => {
        const find = leakFinder([planted]);
        const args = JSON.stringify({
          path: '/srv/app/.env',
          [field]: `line one\n${planted.text}\nline two`,
        });
        for (let end = 0; end <= args.length; end++) {
          const leaks = find(redact(`shell(${args.slice(0, end)}…)`));
          if (leaks.length > 0) throw new Error(`cut at ${end}: ${leaks.join(', ')}`);
        }
      }),
      { numRuns: 60 },
    );
  });

  // Found by the property above (seed -548144276): a clipped AWS secret key that takes the shape
  // of a camelCase name (`gAujq` `Add` `Alnr`) passed for code; a name's parts must be words.
  it.each([
    ['aws_secret_access_key=gAujqAddAlnr', 'aws_secret_access_key=<REDACTED>'],
    ['password=gAujqAddAlnrAqrt', 'password=<REDACTED>'],
    ['password=hasLegacyRepeatableKeyShape', 'password=hasLegacyRepeatableKeyShape'],
  ])('a camelCase name is made of words: %s', (text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  // Found by the property above (seed 1944223153): `MY_` opened a placeholder whatever followed.
  it.each([
    ['password=MY_AAAAAAAAAAAAA', 'password=<REDACTED>'],
    ['password=my_S3cr3tP4ss', 'password=<REDACTED>'],
    ['password=YOUR_QXZKTPLRWW', 'password=<REDACTED>'],
    ['password=YOUR_API_KEY_HERE', 'password=YOUR_API_KEY_HERE'],
    ['token=fake_token_123', 'token=fake_token_123'],
  ])('a placeholder lead is followed by words: %s', (text, expected) => {
    expect(redact(text)).toBe(expected);
  });

  it('redactThenClip redacts before the cut, whatever the limit', () => {
    for (const planted of oneOfEachKind(7)) {
      const find = leakFinder([planted]);
      const text = `see ${planted.text} for access`;
      for (let max = 0; max <= text.length + 2; max++) {
        const clipped = redactThenClip(text, max);
        expect(clipped.length).toBeLessThanOrEqual(max);
        expect(find(clipped)).toEqual([]);
      }
    }
  });

  it('redactThenClip keeps short text, never splits a marker or a surrogate pair', () => {
    expect(redactThenClip('short', 10)).toBe('short');
    expect(redactThenClip('key AKIAIOSFODNN7EXAMPLE and more text', 12)).toBe('key …');
    expect(redactThenClip('ab😀cd', 4)).toBe('ab…');
    expect(redactThenClip('abcdef', 0)).toBe('');
    expect(redactThenClip('password: hunter2 etc', 21, (text) => text.toUpperCase())).toBe(
      'PASSWORD: HUNTER2 ETC',
    );
  });

  it('a PEM block without its END line is redacted to the end of the text', () => {
    const text =
      'key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9u\nZQAAAAAAAAAB';
    expect(redact(text)).toBe(`key:\n${REDACTED}`);
  });

  it.each([
    ['AIzaSyA-abcdefgh…', `${REDACTED}…`],
    ['sk-ant-api03-abcdefgh', REDACTED],
    ['eyJhbGciOiJIUzI1', REDACTED],
    ['xoxb-1234567', REDACTED],
    ['AKIAIOSFODNN', REDACTED],
    ['ghp_abcdefgh', REDACTED],
    ['sk_live_abcd', REDACTED],
    ['git clone https://deploy:s3cr3tpass', `git clone https://deploy:${REDACTED}`],
    ['https://deploy:s3cr3tpass… and', `https://deploy:${REDACTED}… and`],
    ['{"password": "hunter2 is my pa', `{"password": "${REDACTED}`],
    ['{\\"token\\":\\"abc', `{\\"token\\":\\"${REDACTED}`],
  ])('clipped %j -> %j', (input, expected) => {
    expect(redact(input)).toBe(expected);
  });
});

describe('benign look-alikes survive', () => {
  const image = Buffer.from(Array.from({ length: 30_000 }, (_, i) => (i * 7919 + (i >> 3)) % 256)).toString(
    'base64',
  );
  it.each([
    ['a UUID', 'session 3f2b8c1e-9d4a-4f6b-8e2a-1c5d7e9f0a3b started'],
    ['a git SHA', 'HEAD is now at 9fceb02d0ae598e95dc970b74767f19372d61af8 fix'],
    ['a sha256', 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['base64 image data', `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA${image}`],
    ['a URL with a port', 'open http://localhost:8080 and https://example.com:443'],
    ['prose after "basic"', 'a basic understanding of bearer semantics'],
    ['token counts', 'max_tokens: 128000, input_tokens=12, tokens == 5, token == expected'],
    ['a session id key', '{"sessionId":"sess_8f3k2j5h7g9d1s4a","session_id":"run-2026-11-23"}'],
  ])('%s', (_name, text) => {
    expect(redact(text)).toBe(text);
  });
});

describe('no input makes the redactor backtrack', () => {
  const MB = 1024 * 1024;
  it.each([
    ['1 MB of one character', 'a'.repeat(MB), 'a'.repeat(MB)],
    ['1 MB of spaces', ' '.repeat(MB), ' '.repeat(MB)],
    ['sk- repeated', 'sk-'.repeat(MB / 3), REDACTED],
    // A key prefix glued to the text before it is still a key (issue 23: `key_AIza...`): one
    // key, extended linearly to the end.
    ['AIza repeated', 'AIza'.repeat(MB / 4), REDACTED],
  ])('%s', (_name, input, expected) => {
    expect(redact(input)).toBe(expected);
  });

  it('keywords, separators and triggers repeated over 100 KB lines', () => {
    const line = 100 * 1024;
    expect(redact(`password${' '.repeat(line)}x`)).toBe(`password${' '.repeat(line)}x`);
    expect(redact('token '.repeat(line / 6))).toBe('token '.repeat(line / 6));
    expect(redact('pass'.repeat(line / 4))).toBe('pass'.repeat(line / 4));
    expect(redact('://'.repeat(line / 3))).toBe('://'.repeat(line / 3));
    expect(redact(`https://u:${'p'.repeat(line)}`)).toBe(`https://u:${'p'.repeat(line)}`);
    expect(redact('eyJ'.repeat(line / 3))).toBe(REDACTED);
    // Headers without a body are no key material (issue 36: a line of code naming the marker).
    const headers = '-----BEGIN PRIVATE KEY-----'.repeat(line / 27);
    expect(redact(headers)).toBe(headers);
    expect(redact(`api_key="${'x'.repeat(line)}`)).toBe(`api_key="${REDACTED}`);
    const keyValues = 'a=1 token=abc '.repeat(line / 14);
    expect(redact(keyValues)).toBe(`a=1 token=${REDACTED} `.repeat(line / 14));
  });
});
