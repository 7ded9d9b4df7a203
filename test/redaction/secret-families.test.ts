import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { getDefaultRedactor, REDACTED } from '../../src/core/redaction/redactor.js';
import { expandTemplates, survivingParts } from '../support/secret-templates.js';

/**
 * Issue 36: the redaction table. Every secret shape and family of the review (point 2) and
 * the common rule families of gitleaks and secretlint, each caught (nothing of 8 characters
 * of it survives), or a documented limit (SECURITY.md, with its reason; the test checks the
 * limit still holds, so a change is noticed and the row moves), and benign texts (the false
 * alarms of point 3, code that handles tokens by name, hashes, UUIDs, base64 images, CSS)
 * that must come out unchanged. Secrets are generated from templates at test time.
 */

interface Row {
  category: string;
  family: string;
  text: string;
  secret?: string;
  reason?: string;
}

const TABLE = JSON.parse(
  readFileSync(new URL('../fixtures/redaction/secret-families.json', import.meta.url), 'utf8'),
) as { caught: Row[]; limits: Row[]; benign: Row[] };

const redact = getDefaultRedactor();
const counts = { caught: 0, limits: 0, benign: 0 };
const label = (row: Row) => `${row.category}: ${row.family}`;

describe('secret families: caught', () => {
  it.each(TABLE.caught.map((row) => [label(row), row] as const))('%s', (_label, row) => {
    const [text, secret] = expandTemplates(row.family, row.text, row.secret!);
    const out = redact(text!);
    expect(out).toContain(REDACTED);
    // A part that the text also holds outside the secret (its key name) may stay.
    const context = text!.replaceAll(secret!, '\u0000');
    const leaked = survivingParts(secret!, out).filter((part) => !context.includes(part));
    expect(leaked, out).toEqual([]);
    counts.caught++;
  });
});

describe('secret families: documented limits (still as documented)', () => {
  it.each(TABLE.limits.map((row) => [label(row), row] as const))('%s', (_label, row) => {
    expect(row.reason?.length ?? 0, 'a limit names its reason').toBeGreaterThan(20);
    const [text, secret] = expandTemplates(row.family, row.text, row.secret!);
    expect(redact(text!)).toContain(secret);
    counts.limits++;
  });
});

describe('benign texts stay unchanged', () => {
  it.each(TABLE.benign.map((row) => [label(row), row] as const))('%s', (_label, row) => {
    const [text] = expandTemplates(row.family, row.text);
    expect(redact(text!)).toBe(text);
    counts.benign++;
  });
});

describe('the table covers what issue 36 names', () => {
  it('every category of point 2 has caught rows, and the benign rows name point 3', () => {
    const categories = new Set(TABLE.caught.map((row) => row.category));
    for (const category of [
      'cloud',
      'vcs',
      'ci',
      'registry',
      'chat',
      'payment',
      'database',
      'private-key',
      'jwt',
      'url',
      'cli',
      'escape',
    ]) {
      expect(categories.has(category), category).toBe(true);
    }
    const benign = new Set(TABLE.benign.map((row) => row.category));
    for (const category of ['false-alarm', 'code', 'hash', 'uuid', 'image', 'css']) {
      expect(benign.has(category), category).toBe(true);
    }
  });
});

afterAll(() => {
  // The figures of the "How it is checked": printed with the test run.
  console.log(
    `redaction table: ${counts.caught}/${TABLE.caught.length} caught, ${counts.limits}/${TABLE.limits.length} documented limits, ${counts.benign}/${TABLE.benign.length} benign kept`,
  );
});
