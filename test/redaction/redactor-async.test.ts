/**
 * Issue 47 point 2: `createRedactor()` compiles every built-in rule in one piece (10-30 ms of
 * CPU in a fresh process), and the CLI's `--report` (and `report`) built its redactor that way.
 * `createRedactorAsync()` compiles the same rules in slices, a turn of the loop between them,
 * and gives the same output byte for byte; the CLI's report redactor uses it. The library's
 * clock is driven here (each read 2 ms later): no timing is measured.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reportRedactor } from '../../src/cli/cli-io.js';
import { clock } from '../../src/core/clock.js';
import { CompactError } from '../../src/core/errors.js';
import { releaseProcessCaches } from '../../src/core/process-caches.js';
import { getDefaultRedactor, warmDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { postToAriadne } from '../../src/exporters/ariadne/ariadne-post.js';
import { createRedactor, createRedactorAsync, type Redactor } from '../../src/index.js';
import { expandTemplates } from '../support/secret-templates.js';

interface Row {
  family: string;
  text: string;
  secret?: string;
}

const TABLE = JSON.parse(
  readFileSync(new URL('../fixtures/redaction/secret-families.json', import.meta.url), 'utf8'),
) as { caught: Row[]; limits: Row[]; benign: Row[] };
const TEXTS = [...TABLE.caught, ...TABLE.limits, ...TABLE.benign].map(
  (row) => expandTemplates(row.family, row.text)[0]!,
);

afterEach(() => {
  vi.restoreAllMocks();
});

/** Turns of the event loop taken while `build` runs. */
async function turnsDuring<T>(build: () => Promise<T>): Promise<{ value: T; turns: number }> {
  let now = 0;
  vi.spyOn(clock, 'now').mockImplementation(() => (now += 2));
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const value = await build();
  done = true;
  return { value, turns };
}

const sameOutput = (whole: Redactor, sliced: Redactor) => {
  const texts = [...TEXTS, TEXTS.join('\n'), `{"api_key": "${TEXTS[0]}"}`];
  expect(texts.map(sliced)).toEqual(texts.map(whole));
};

describe('createRedactorAsync', () => {
  it('compiles the rules in slices, a turn of the loop between them', async () => {
    const { turns } = await turnsDuring(() => createRedactorAsync());
    expect(turns).toBeGreaterThan(4);
  });

  it("gives createRedactor()'s output byte for byte, with the defaults and with options", async () => {
    expect(TEXTS.length).toBeGreaterThan(100);
    sameOutput(createRedactor(), await createRedactorAsync());
    const options = {
      extraPatterns: ['\\binternal-[0-9]+\\b', '(?i)codename-[a-z]+'],
      custom: (text: string) => text.replaceAll('hunter2', '***'),
    };
    const whole = createRedactor(options);
    const sliced = await createRedactorAsync(options);
    sameOutput(whole, sliced);
    expect(sliced('internal-42 CODENAME-falcon password hunter2')).toBe(
      whole('internal-42 CODENAME-falcon password hunter2'),
    );
    const patterns = { patterns: ['secret-[0-9]+'] };
    sameOutput(createRedactor(patterns), await createRedactorAsync(patterns));
  });

  it('rejects a bad pattern with the same typed error', async () => {
    const made = createRedactorAsync({ extraPatterns: ['(unclosed'] });
    await expect(made).rejects.toBeInstanceOf(CompactError);
    await expect(made).rejects.toMatchObject({ code: 'invalid_config' });
  });
});

describe('the default redactor', () => {
  it('is compiled in slices by warmDefaultRedactor(), then redacts as createRedactor() does', async () => {
    releaseProcessCaches();
    const { turns } = await turnsDuring(() => warmDefaultRedactor());
    expect(turns).toBeGreaterThan(4);
    sameOutput(createRedactor(), getDefaultRedactor());
    // Built: a second warm-up has nothing to do.
    expect((await turnsDuring(() => warmDefaultRedactor())).turns).toBe(0);
  });

  it('is compiled at once by a redaction that comes first, with the same output', () => {
    releaseProcessCaches();
    sameOutput(createRedactor(), getDefaultRedactor());
  });

  it("is compiled in slices before the Ariadne exporter's first log line", async () => {
    releaseProcessCaches();
    const lines: string[] = [];
    const target = {
      url: 'https://ariadne.example/v1/spans?api_key=sk-live-0123456789abcdef',
      headers: {},
      timeoutMs: 1_000,
      fetch: (async () =>
        new Response('bad token=ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', { status: 400 })) as never,
      warn: (line: string) => lines.push(line),
    };
    const { value, turns } = await turnsDuring(() => postToAriadne(target, '[]', 0, 1));
    expect(value).toBe('rejected');
    expect(turns).toBeGreaterThan(4);
    const redact = createRedactor();
    expect(lines).toEqual([
      `POST ${redact(target.url)} answered 400 for 0 events: ${redact('bad token=ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')}`,
    ]);
  });
});

describe("the CLI's report redactor", () => {
  it('compiles the rules in slices and redacts as createRedactor() does', async () => {
    const { value, turns } = await turnsDuring(() => reportRedactor(undefined));
    expect(turns).toBeGreaterThan(4);
    sameOutput(createRedactor(), value!);
    const extra = { extraPatterns: ['\\binternal-[0-9]+\\b'] };
    sameOutput(createRedactor(extra), (await reportRedactor(extra))!);
  });

  it('is none when redaction is off, and the function given when it is one', async () => {
    expect(await reportRedactor(false)).toBeUndefined();
    const custom = (text: string) => text.toUpperCase();
    expect(await reportRedactor(custom)).toBe(custom);
  });
});
