/**
 * The CLI at its edges: text from files reaches the terminal with its control characters made
 * visible (JSON output stays exact), and every failure, deep or damaged input included, is one
 * line on stderr with exit 2; a torn last JSONL line is skipped with a one-line warning.
 */
import { appendFile, cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { chatSession, cli, useTempFiles } from '../../test/support/cli-fixtures.js';
import { newestArchiveName } from '../storage/session-path.js';
import { syntheticSession } from '../testing/synthetic-session.js';
import { EXIT_CODES } from './run-cli.js';
import { terminalText } from './terminal-text.js';

const temp = useTempFiles();
const HOSTILE = 'Goal: fix \u001b[2J\u001b]0;pwned\u0007 the bug\u0000 in \u202Egnp.exe\u202C now';
let archive: string;
let trace: string;

beforeAll(async () => {
  const transcript = await temp.file('session.json', syntheticSession({ turns: 12, seed: 3 }));
  archive = temp.path('archive');
  trace = temp.path('trace.jsonl');
  const run = await cli(['replay', transcript, '--max-context', '5000', '--out', archive, '--trace', trace]);
  expect(run.code).toBe(0);
});

/** A copy of the replayed session folder, with `edit` applied to its newest summary. */
async function sessionCopy(name: string, edit?: (summary: Record<string, unknown>) => void): Promise<string> {
  const folder = temp.path(name);
  await cp(join(archive, 'replay'), folder, { recursive: true });
  if (edit) {
    const file = newestArchiveName(await readdir(folder), 'summary')!;
    const summary = JSON.parse(await readFile(join(folder, file), 'utf8'));
    edit(summary);
    await writeFile(join(folder, file), JSON.stringify(summary));
  }
  return folder;
}

const oneLine = (run: { stderr: string; code: number }) => {
  expect(run.code).toBe(EXIT_CODES.badInput);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: /);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  return lines[0]!;
};

describe('terminal text', () => {
  it('makes ESC, NUL, BEL and bidi overrides visible; keeps newlines, tabs and plain Unicode', () => {
    expect(terminalText(HOSTILE)).toBe(
      'Goal: fix \\u{1b}[2J\\u{1b}]0;pwned\\u{07} the bug\\u{00} in \\u{202e}gnp.exe\\u{202c} now',
    );
    expect(terminalText('a\tb\nc — é 日本')).toBe('a\tb\nc — é 日本');
  });

  it('status prints a hostile summary with its controls visible; --json stays exact', async () => {
    const folder = await sessionCopy('hostile', (summary) => {
      summary.text = HOSTILE;
    });
    const run = await cli(['status', folder]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(run.stdout).toContain('\\u{1b}[2J');
    expect(run.stdout).toContain('\\u{202e}gnp.exe');
    const json = await cli(['status', folder, '--json']);
    expect(JSON.parse(json.stdout).summary.text).toBe(HOSTILE);
  });

  it('error lines carry a hostile file name visibly, never raw', async () => {
    const run = await cli(['estimate', `missing-\u001b[31m-\u202E.json`]);
    const line = oneLine(run);
    expect(line).toContain('missing-\\u{1b}[31m-\\u{202e}.json');
  });
});

describe('every failure is one line and exit 2', () => {
  it('report and compact --report into a folder that does not exist', async () => {
    const nowhere = temp.path('no/such/folder');
    expect(oneLine(await cli(['report', trace, '--out', join(nowhere, 'r.html')]))).toMatch(/ENOENT|no such/);
    const input = await temp.file('c.json', chatSession());
    const compact = await cli([
      'compact',
      input,
      '--max-context',
      '4000',
      '--report',
      join(nowhere, 'r.json'),
    ]);
    expect(oneLine(compact)).toMatch(/--report .*cannot write \(ENOENT\)/);
  });

  it('a 100,000-deep JSON line, as a trace and as a transcript', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const traceFile = await temp.file(
      'deep-trace.jsonl',
      `{"name":"compact.token_estimate","properties":{"x":${deep}}}\n`,
    );
    oneLine(await cli(['report', traceFile, '--out', temp.path('deep.html')]));
    const messages = await temp.file('deep.json', `[{"role":"user","content":${deep}}]`);
    oneLine(await cli(['compact', messages, '--max-context', '4000']));
    oneLine(await cli(['estimate', messages]));
  });

  it('status on a damaged archive: invalid date, non-string text, a non-JSON transcript line', async () => {
    const date = await sessionCopy('bad-date', (summary) => {
      summary.createdAt = 'yesterday-ish';
    });
    expect(oneLine(await cli(['status', date]))).toMatch(/"createdAt" must be a valid date/);
    const text = await sessionCopy('bad-text', (summary) => {
      summary.text = { not: 'a string' };
    });
    expect(oneLine(await cli(['status', text]))).toMatch(/"text" must be a string/);
    const line = await sessionCopy('bad-line');
    const transcript = newestArchiveName(await readdir(line), 'transcript')!;
    const lines = (await readFile(join(line, transcript), 'utf8')).split('\n');
    lines.splice(1, 0, 'not json at all');
    await writeFile(join(line, transcript), lines.join('\n'));
    expect(oneLine(await cli(['status', line]))).toMatch(
      /transcript-pre-compact-\S+: message \d+ is not valid JSON/,
    );
  });
});

describe('a torn last line', () => {
  it('of events.jsonl: status and report skip it with a one-line warning', async () => {
    const folder = await sessionCopy('torn');
    await appendFile(join(folder, 'events.jsonl'), '{"name":"compact.reduction","properties":{"tok');
    const total = (await readFile(join(folder, 'events.jsonl'), 'utf8')).split('\n').length;
    const status = await cli(['status', folder]);
    expect(status.code).toBe(0);
    expect(status.stderr).toBe(
      `warning: ${join(folder, 'events.jsonl')} line ${total}: incomplete last line skipped (46 bytes, a torn write)\n`,
    );
    expect(status.stdout).toMatch(/\d+ compactions?/);
    const report = await cli(['report', folder, '--out', temp.path('torn.html')]);
    expect(report.code).toBe(0);
    expect(report.stderr.trim().split('\n')).toHaveLength(1);
    expect(report.stderr).toMatch(/^warning: .*incomplete last line skipped/);
  });

  it('of a JSONL transcript: skipped with a warning; a bad line elsewhere is still named', async () => {
    const jsonl = chatSession()
      .map((message) => JSON.stringify(message))
      .join('\n');
    const torn = await temp.file('torn.jsonl', `${jsonl}\n{"role":"user","con`);
    const run = await cli(['estimate', torn]);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^warning: .*torn\.jsonl line \d+: incomplete last line skipped/);
    const whole = await cli(['estimate', await temp.file('whole.jsonl', `${jsonl}\n`)]);
    expect(JSON.parse(run.stdout).total).toBe(JSON.parse(whole.stdout).total);
    // Ended by a newline, the same bad line is no torn write: an error naming it.
    const ended = await temp.file('ended.jsonl', `${jsonl}\n{"role":"user","con\n`);
    expect(oneLine(await cli(['estimate', ended]))).toMatch(/ended\.jsonl line \d+: not valid JSON/);
    const middle = await temp.file('middle.jsonl', `{"role":"user","content":"a"}\n{oops\n${jsonl}`);
    expect(oneLine(await cli(['estimate', middle]))).toMatch(/middle\.jsonl line 2: not valid JSON/);
  });
});
