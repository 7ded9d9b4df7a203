/**
 * Review 81d: error lines name what the user gave. `--state` in a missing folder read
 * "cannot be written: ENOENT ENOENT: no such file or directory, open '.../s.json.19636.4939f841eaaa.tmp'"
 * (the code twice and a temporary file the user never made); a missing config file named by
 * COMPACT_CONFIG did not say where its name came from; `proxy --upstream notaurl` read
 * "upstream is not a URL", the option's name rather than the flag's.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles } from '../../test/support/cli-fixtures.js';

const temp = useTempFiles();
const request = [{ role: 'user', content: 'Where is the invoice total computed?' }];

describe('error lines name what the user gave', () => {
  it('--state in a folder that does not exist: the flag, the path and the code once', async () => {
    const state = join(temp.path('missing-folder'), 'state.json');
    const input = await temp.file('request.json', request);
    const run = await cli(['compact', input, '--max-context', '4096', '--force', '--state', state]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`error: --state ${state} cannot be written (ENOENT)\n`);
  });

  it('a missing config file named by COMPACT_CONFIG says so', async () => {
    const input = await temp.file('request-2.json', request);
    const missing = temp.path('nope.yaml');
    const run = await cli(['estimate', input], '', { COMPACT_CONFIG: missing });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`error: config file not found: ${missing} (named by COMPACT_CONFIG)\n`);
    const flagged = await cli(['estimate', input, '--config', missing]);
    expect(flagged.stderr).toBe(`error: config file not found: ${missing}\n`);
  });
});

describe('proxy --upstream', () => {
  it.each([
    ['notaurl', '--upstream is not a URL (got notaurl)'],
    ['ftp://example.com', '--upstream must be http or https'],
  ])('%s: exit 2, one line naming the flag', async (upstream, line) => {
    const run = await cli(['proxy', '--upstream', upstream, '--port', '0'], '', {
      AGENT_COMPACTION_PROXY_RESPAWN: '0',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`error: ${line}\n`);
  });
});
