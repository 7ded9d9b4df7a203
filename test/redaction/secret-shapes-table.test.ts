import { describe, expect, it } from 'vitest';
import { createRedactor, REDACTED, redactDeep } from '../../src/core/redaction/redactor.js';

/**
 * Issue 23, findings 3 and 4: each secret shape of the review, caught (the secret is gone) or
 * a documented limit (SECURITY.md), and benign texts that must stay as they are.
 */

const redact = createRedactor();

/** [shape, text, the secret that must not survive] */
const CAUGHT: readonly (readonly [string, string, string])[] = [
  ['URL with an empty user', 'redis://:s3cretPassw0rd@cache.internal:6379/0', 's3cretPassw0rd'],
  ['URL with / in the password', 'postgres://app:ab/cd3fGh9@db.example.com/app', 'ab/cd3fGh9'],
  ['URL with @ in the password', 'mysql://root:p@ssW0rd99@db.example.com/x', 'ssW0rd99'],
  ['Go := assignment', 'apiKey := "Zx81kLm02PqRs"', 'Zx81kLm02PqRs'],
  ['Ruby/PHP => assignment', "'password' => 'Zx81kLm02PqRs'", 'Zx81kLm02PqRs'],
  ['unquoted value with spaces', 'password = correct horse battery staple', 'battery staple'],
  ['unquoted value with commas and semicolons', 'DB_PASSWORD=abc,def;ghi9', 'def;ghi9'],
  ['Cookie header', 'Cookie: session=9f8e7d6c5b4a; csrftoken=Zx81kLm02PqRs', 'Zx81kLm02PqRs'],
  ['Set-Cookie header', 'Set-Cookie: sid=Zx81kLm02PqRs; Path=/; HttpOnly', 'Zx81kLm02PqRs'],
  ['prefix glued after _', 'key_sk-proj-Ab3dEfGh1jKlMnOpQrStUv', 'Ab3dEfGh1jKlMnOpQrStUv'],
  ['prefix glued after a digit', '0ghp_Ab3dEfGh1jKlMnOpQrStUvWxYz012345', 'Ab3dEfGh1jKlMnOpQrStUvWxYz012345'],
  [
    'prefix glued after %22',
    '%22ghp_Ab3dEfGh1jKlMnOpQrStUvWxYz012345%22',
    'Ab3dEfGh1jKlMnOpQrStUvWxYz012345',
  ],
  ['doubly escaped JSON', '{\\\\\\"password\\\\\\": \\\\\\"Zx81kLm02PqRs\\\\\\"}', 'Zx81kLm02PqRs'],
  ['pass key', 'DB_PASS=Zx81kLm02PqRs', 'Zx81kLm02PqRs'],
  [
    'Azure AccountKey',
    'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=Zx81kLm02PqRs+/==;EndpointSuffix=x',
    'Zx81kLm02PqRs',
  ],
  [
    'SharedAccessKey',
    'Endpoint=sb://x/;SharedAccessKeyName=r;SharedAccessKey=Zx81kLm02PqRs=',
    'Zx81kLm02PqRs',
  ],
  [
    'S3 presigned URL',
    'https://b.s3.amazonaws.com/k?X-Amz-Credential=AK%2F1&X-Amz-Signature=9f8e7d6c5b4a39281706',
    '9f8e7d6c5b4a39281706',
  ],
  [
    'Azure SAS sig=',
    'https://a.blob.core.windows.net/c/b?sv=2022&sig=Zx81kLm02PqRs%3D&se=2030',
    'Zx81kLm02PqRs',
  ],
  ['token: long value', 'token: 9f8e7d6c5b4a39281706f5e4d3c2b1a0', '9f8e7d6c5b4a39281706f5e4d3c2b1a0'],
  ['password: a number', 'password: 12345678', '12345678'],
  ['URL-encoded key name', 'pass%77ord%3DZx81kLm02PqRs', 'Zx81kLm02PqRs'],
  [
    'base64 path-like secret',
    'secret: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'K7MDENG/bPxRfiCYEXAMPLEKEY',
  ],
];

/** Documented limits: shapes recognizes nothing in (SECURITY.md, "Limits"). */
const LIMITS: readonly (readonly [string, string])[] = [
  ['base64-encoded', 'cGFzc3dvcmQ9aHVudGVyMg=='],
  ['prose', 'the password is hunter2'],
  ['value on the next line', 'password:\nhunter2'],
  ['split across messages', 'sk-pr'],
];

/** Benign texts that must stay exactly as they are. */
const BENIGN: readonly string[] = [
  'data:application/json;base64,eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9',
  'pwd: /home/runner/work/app',
  'auth: src/auth/session.ts',
  'token: 128000',
  'max_tokens: 128000',
  '<div class="sk-spinner-bounce sk-fading-circle">',
  '#sk-header-main { color: red }',
  'the task-list and risk-assessment-matrix',
  'http://localhost:8080/users/@alice',
  'password: is required',
  'bypass: true',
  'session_id=0b7c6f2e-1f1a-4c1b-9a55-3c2e1d0f9a8b',
];

describe('secret shapes of the review', () => {
  it.each(CAUGHT)('%s: caught', (_shape, text, secret) => {
    const out = redact(text);
    expect(out).toContain(REDACTED);
    expect(out).not.toContain(secret);
  });

  it.each(LIMITS)('%s: a documented limit (left as is)', (_shape, text) => {
    expect(redact(text)).toBe(text);
  });

  it.each(BENIGN)('benign: %s', (text) => {
    expect(redact(text)).toBe(text);
  });

  it('a PEM header without END: the base64 lines go, the prose after them stays', () => {
    const text =
      'key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7Zx81kLm02PqRs\nAbCdEf012345\n\nThen run make deploy and check the logs.';
    const out = redact(text);
    expect(out).not.toContain('MIIEowIBAAKCAQEA');
    expect(out).not.toContain('AbCdEf012345');
    expect(out).toContain('run make deploy and check the logs.');
  });

  it('structured keys: pass, cookie, set-cookie and connection strings are replaced whole', () => {
    const out = redactDeep(
      { pass: 'x y z', Cookie: 'a=1', 'set-cookie': 'b=2', connection_string: 'Server=x', bypass: true },
      redact,
    );
    expect(out).toEqual({
      pass: REDACTED,
      Cookie: REDACTED,
      'set-cookie': REDACTED,
      connection_string: REDACTED,
      bypass: true,
    });
  });
});

describe('archived artifacts get the structured-key pass', () => {
  it('a {"Cookie": ...} tool input in a JSON artifact is replaced whole', async () => {
    const { redactArchivedText } = await import('../../src/core/redaction/redactor.js');
    const artifact = JSON.stringify([
      {
        role: 'assistant',
        tool_calls: [{ input: { url: 'https://x', headers: { Cookie: 'plain words here' } } }],
      },
    ]);
    const out = redactArchivedText(artifact, redact);
    expect(out).not.toContain('plain words here');
    expect(JSON.parse(out)[0].tool_calls[0].input.headers.Cookie).toBe(REDACTED);
    expect(redactArchivedText('not json: password=hunter2x', redact)).toBe(`not json: password=${REDACTED}`);
  });
});
