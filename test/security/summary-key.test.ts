import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCompactError } from '../../src/core/errors.js';
import { SUMMARY_KEY_ENV, SUMMARY_KEY_FILE_ENV, SummaryMarks } from '../../src/core/summary/summary-mark.js';

/**
 * Issue 44 point 1: no summary is ever signed with a weak key. An empty, blank or short key is
 * refused from every source (option, environment, key file) with an `invalid_config` error
 * naming the source; a key file or folder another user owns or others can write is refused;
 * a new key file is created atomically, 0600 in a 0700 folder.
 */

let dir: string;
const saved = { key: process.env[SUMMARY_KEY_ENV], file: process.env[SUMMARY_KEY_FILE_ENV] };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'summary-key-'));
  delete process.env[SUMMARY_KEY_ENV];
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const [name, value] of [
    [SUMMARY_KEY_ENV, saved.key],
    [SUMMARY_KEY_FILE_ENV, saved.file],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** The error signing raises, or undefined. */
function signError(marks: () => SummaryMarks): unknown {
  try {
    marks().format('s', 1, 'body');
    return undefined;
  } catch (error) {
    return error;
  }
}

function expectRefused(error: unknown, source: RegExp): void {
  expect(isCompactError(error, 'invalid_config'), String(error)).toBe(true);
  expect((error as Error).message).toMatch(source);
}

describe('summary keys', () => {
  it.each([
    ['empty', ''],
    ['blank', '   \n\t\n'],
    ['short', 'sixteen-chars-16'],
  ])('a key file that is %s is refused, naming the source', (_name, content) => {
    const file = join(dir, 'keys', 'summary-key');
    mkdirSync(join(dir, 'keys'), { mode: 0o700 });
    writeFileSync(file, content, { mode: 0o600 });
    process.env[SUMMARY_KEY_FILE_ENV] = file;
    expectRefused(
      signError(() => new SummaryMarks()),
      new RegExp(`${SUMMARY_KEY_FILE_ENV}.*${file}`),
    );
  });

  it('a short option key or environment key is refused, naming the source', () => {
    expectRefused(
      signError(() => new SummaryMarks('x'.repeat(31))),
      /summaryKeys\[0\]/,
    );
    expectRefused(
      signError(() => new SummaryMarks(['y'.repeat(40), ' '])),
      /summaryKeys\[1\]/,
    );
    process.env[SUMMARY_KEY_ENV] = `${'z'.repeat(40)},short-one`;
    expectRefused(
      signError(() => new SummaryMarks()),
      new RegExp(SUMMARY_KEY_ENV),
    );
    expect(signError(() => new SummaryMarks('k'.repeat(32)))).toBeUndefined();
  });

  it('a key file others can read or write, or in a folder others can write, is refused', () => {
    const folder = join(dir, 'keys');
    mkdirSync(folder, { mode: 0o700 });
    const file = join(folder, 'summary-key');
    writeFileSync(file, 'k'.repeat(43), { mode: 0o644 });
    chmodSync(file, 0o644);
    process.env[SUMMARY_KEY_FILE_ENV] = file;
    expectRefused(
      signError(() => new SummaryMarks()),
      /mode 0644/,
    );
    chmodSync(file, 0o600);
    expect(signError(() => new SummaryMarks())).toBeUndefined();
    chmodSync(folder, 0o777);
    expectRefused(
      signError(() => new SummaryMarks()),
      /folder .* mode 0777/,
    );
  });

  it.runIf(process.getuid?.() === 0)('a key file or folder owned by another user is refused', () => {
    const folder = join(dir, 'keys');
    mkdirSync(folder, { mode: 0o700 });
    const file = join(folder, 'summary-key');
    writeFileSync(file, 'k'.repeat(43), { mode: 0o600 });
    process.env[SUMMARY_KEY_FILE_ENV] = file;
    chownSync(file, 1, 1);
    expectRefused(
      signError(() => new SummaryMarks()),
      /owned by uid 1/,
    );
    chownSync(file, 0, 0);
    chownSync(folder, 1, 1);
    expectRefused(
      signError(() => new SummaryMarks()),
      /folder .* owned by uid 1/,
    );
  });

  it('a new key file is created whole, 0600 in a 0700 folder, with no temporary file left', () => {
    const file = join(dir, 'fresh', 'summary-key');
    process.env[SUMMARY_KEY_FILE_ENV] = file;
    const first = new SummaryMarks();
    const text = first.format('s', 1, 'body');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'fresh')).mode & 0o777).toBe(0o700);
    expect(Buffer.byteLength(readFileSync(file, 'utf8').trim())).toBeGreaterThanOrEqual(32);
    expect(readdirSync(join(dir, 'fresh'))).toEqual(['summary-key']);
    // Another manager of the installation reads the same key back.
    expect(new SummaryMarks().verify('s', text)?.body).toBe('body');
  });
});
