/**
 * Review 81d: `replay --trace FILE` writes the trace of that replay. A second replay to the same
 * file appended to the first, and `report` then drew both as one session (10 compactions in 102
 * calls for the doc's 5 in 51); a path that cannot be written printed an exporter line per batch
 * and exit 0, with "trace: FILE" claimed. `--out DIR` into a session folder already archived
 * adds to it (as a restarted process would: versions v5.., status counting both runs), and
 * now says so.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { chatSession, cli, useTempFiles } from '../../../test/support/cli-fixtures.js';

const temp = useTempFiles();

describe('replay --trace FILE', () => {
  it('holds the last replay only: run twice, report draws one replay', async () => {
    const transcript = await temp.file('session.json', chatSession());
    const trace = temp.path('trace.jsonl');
    const replay = ['replay', transcript, '--max-context', '6000', '--trace', trace];
    const first = await cli(replay);
    expect(first.code).toBe(0);
    const once = await readFile(trace, 'utf8');
    expect((await cli(replay)).code).toBe(0);
    expect((await readFile(trace, 'utf8')).split('\n').length).toBe(once.split('\n').length);
    const report = await cli(['report', trace, '--out', temp.path('report.html')]);
    const calls = first.stdout.match(/in (\d+) calls/)?.[1];
    expect(report.stdout).toContain(`, ${calls} calls)`);
  });

  it('a path that cannot be written: exit 2, one line naming --trace, before any replay', async () => {
    const transcript = await temp.file('session-2.json', chatSession());
    const blocker = temp.path('a-file');
    await writeFile(blocker, 'not a folder');
    const run = await cli([
      'replay',
      transcript,
      '--max-context',
      '6000',
      '--trace',
      `${blocker}/trace.jsonl`,
    ]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^error: --trace .*: cannot write \(E[A-Z]+\)$/),
    ]);
  });
});

describe('replay --out DIR', () => {
  it('a session folder already archived: one warning line, the replay goes on', async () => {
    const transcript = await temp.file('session-3.json', chatSession());
    const out = temp.path('archive');
    const replay = ['replay', transcript, '--max-context', '6000', '--out', out];
    const first = await cli(replay);
    expect(first.stderr).not.toContain('warning:');
    const again = await cli(replay);
    expect(again.code).toBe(0);
    const warnings = again.stderr.split('\n').filter((line) => line.startsWith('warning:'));
    expect(warnings).toEqual([
      `warning: ${out}/replay already holds an archived session: this replay adds to it (status and report count both runs; another --out or --session-id keeps them apart)`,
    ]);
    expect((await cli([...replay, '--session-id', 'other'])).stderr).not.toContain('warning:');
  });
});
