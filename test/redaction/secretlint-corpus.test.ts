import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';

/**
 * Issue 44 point 4, the second outside corpus: the failing ("ng") test snapshots of
 * secretlint's recommended preset rules (test/fixtures/redaction/secretlint, MIT), each input
 * with the secrets secretlint reports in it: none left in part (a run of 8 characters of its
 * key material that the input holds only inside the secret). Measured: 102 of 102 caught whole
 * (it was 93, 91%, before the AWS account id, Azure tenant and client id rules, the short
 * `user:pass@` URL password secretlint's basicauth rule reports, and the SendGrid key glued to
 * a word; the one occurrence secretlint skips, `somSG.…`, holds the same secret text); the
 * floor below is the measured one, so a regression fails. review-87a added the npm and
 * privatekey rules' snapshots (named by case, not `ng.*`): 113 of 113, after the GitHub token
 * as a git URL's user (`git+https://<token>:x-oauth-basic@github.com/...`, 2 left whole before).
 */

interface Case {
  rule: string;
  case: string;
  input: string;
  secrets: string[];
}
const { cases } = JSON.parse(
  readFileSync(new URL('../fixtures/redaction/secretlint/snapshots.json', import.meta.url), 'utf8'),
) as { cases: Case[] };

const redact = getDefaultRedactor();

/**
 * secretlint's range often spans more than the key (`mongodb://user:pass@host/db`,
 * `AWS_SECRET_ACCESS_KEY = ...`): its key material is its longest part between separators
 * that is not a name (has a digit or mixed case, is not an UPPER_SNAKE name).
 */
function keyMaterial(secret: string): string {
  // A URL's password (`scheme://user:<password>@host`, the last `@` ends it).
  const password = /:\/\/[^:@/\s]*:(.+)@[^@]*$/.exec(secret)?.[1];
  if (password !== undefined) return password;
  const parts = secret.split(/[\s:/@=,;"'`?&]+/).filter((part) => part.length >= 8);
  const keys = parts.filter(
    (part) => /\d|[a-z].*[A-Z]|[A-Z].*[a-z]/.test(part) && !/^[A-Z0-9_]+$/.test(part),
  );
  return [...keys].sort((a, b) => b.length - a.length)[0] ?? secret;
}

function outcomeOf(input: string, secret: string, out: string): 'caught' | 'whole' | 'part' {
  if (out.includes(secret)) return 'whole';
  const context = input.replaceAll(secret, '\u0000');
  const core = keyMaterial(secret);
  for (let start = 0; start + 8 <= core.length; start++) {
    const part = core.slice(start, start + 8);
    if (out.includes(part) && !context.includes(part)) return 'part';
  }
  return 'caught';
}

const results = cases.flatMap((item) => {
  const out = redact(item.input);
  return item.secrets.map((secret) => ({
    rule: item.rule,
    name: item.case,
    secret,
    result: outcomeOf(item.input, secret, out),
  }));
});

describe('secretlint preset snapshots as a corpus', () => {
  it('every reported secret caught whole (measured floor, the issue asks 95%), none in part', () => {
    expect(results.length).toBeGreaterThan(90);
    const missed = results.filter((row) => row.result !== 'caught');
    const caught = results.length - missed.length;
    expect(missed.filter((row) => row.result === 'part')).toEqual([]);
    expect(caught / results.length, JSON.stringify(missed, null, 1)).toBeGreaterThanOrEqual(1);
  });
});

describe("secretlint's key-named ids and short URL passwords, beyond its snapshots", () => {
  const GUID = '3f2b8c1d-9a4e-4b7f-8c2d-1e5a6b7c8d9e';
  it.each([
    ['an AWS account id in JSON', `{"awsAccountId": "123456789012"}`, '123456789012'],
    ['an AWS account id with dashes', 'AWS_ACCOUNT_ID: 1234-5678-9012', '1234-5678-9012'],
    ['an AWS account id, JSON in JSON', `{\\"aws_account_id\\": \\"123456789012\\"}`, '123456789012'],
    ['an Azure tenant id', `AZURE_TENANT_ID="${GUID}"`, GUID],
    ['an Azure client id, camelCase', `const azureClientId := '${GUID}'`, GUID],
    ['an OAuth client id in GUID form', `client_id=${GUID}&scope=openid`, GUID],
    ['a four-letter URL password', 'ftp://deploy:pass@files.example.com/in', 'pass@'],
    [
      'a SendGrid key glued to a word',
      `keySG.${'Ab3dEf9hKm2pQr7tAb3dEf'}.${'x1Y2z3'.repeat(8).slice(0, 43)}`,
      'Ab3dEf9hKm2pQr7t',
    ],
  ])('%s is caught', (_name, text, secret) => {
    const out = redact(text);
    expect(out).toContain('<REDACTED>');
    expect(out).not.toContain(secret);
  });

  it.each([
    'accountId: 42',
    'account_id = 12345678901234567890',
    `tenantId: "${GUID}"`,
    'client_id: my-web-app',
    `request_id=${GUID}`,
    'redis://:password@localhost:6379',
    'https://user:<password>@host.example.com',
  ])('%s stays', (text) => {
    expect(redact(text)).toBe(text);
  });
});
