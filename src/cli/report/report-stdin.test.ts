/**
 * Review 81d: `report - --out page.html` failed with "cannot read -: ENOENT", though every
 * command's FILE reads stdin for `-` (agent-compaction --help, docs/cli.md). Now a trace on
 * stdin is reported as it is, a transcript replayed first, as from a file.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { chatSession, cli, useTempFiles } from '../../../test/support/cli-fixtures.js';

const temp = useTempFiles();

describe('report - (stdin)', () => {
  it('a transcript on stdin is replayed and reported as the same file would be', async () => {
    const session = chatSession();
    const transcript = await temp.file('session.json', session);
    const fromFile = await cli([
      'report',
      transcript,
      '--out',
      temp.path('file.html'),
      '--max-context',
      '6000',
    ]);
    const fromStdin = await cli(
      ['report', '-', '--out', temp.path('stdin.html'), '--max-context', '6000'],
      JSON.stringify(session),
    );
    expect(fromStdin.code).toBe(0);
    expect(fromStdin.stdout).toBe(fromFile.stdout.replace(temp.path('file.html'), temp.path('stdin.html')));
  });

  it('a trace on stdin is reported as it is', async () => {
    const trace = temp.path('trace.jsonl');
    await cli([
      'replay',
      await temp.file('session-2.json', chatSession()),
      '--max-context',
      '6000',
      '--trace',
      trace,
    ]);
    const fromFile = await cli(['report', trace, '--out', temp.path('trace-file.html')]);
    const run = await cli(
      ['report', '-', '--out', temp.path('trace-stdin.html')],
      await readFile(trace, 'utf8'),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      fromFile.stdout.replace(temp.path('trace-file.html'), temp.path('trace-stdin.html')),
    );
  });
});
