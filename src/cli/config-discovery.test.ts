/**
 * Issue 48 point 3: every command finds its config file as docs/cli.md says: `--config FILE`,
 * else `COMPACT_CONFIG`, else one of ./compact.yaml, ./compact.yml, ./compact.json and
 * ./compact.config.{yaml,yml,json,js,mjs} in the working directory.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles } from '../../test/support/cli-fixtures.js';
import { CONFIG_FILE_NAMES } from './find-config-file.js';
import { COMMAND_HELP } from './help.js';
import { loadManagerOptions } from './load-manager-options.js';

const temp = useTempFiles();
const messages = [{ role: 'user', content: 'Where is the invoice total computed?' }];

/** A folder holding `name` with a config that sets the window to `window`. */
async function folderWith(name: string, window: number): Promise<string> {
  const dir = temp.path(`${name}-${window}`);
  await mkdir(dir, { recursive: true });
  const body = name.endsWith('.json')
    ? JSON.stringify({ version: 1, max_context_tokens: window })
    : /\.m?js$/.test(name)
      ? `export default { version: 1, max_context_tokens: ${window} };\n`
      : `version: 1\nmax_context_tokens: ${window}\n`;
  await writeFile(join(dir, name), body);
  await writeFile(join(dir, 'request.json'), JSON.stringify(messages));
  return dir;
}

const windowOf = (stdout: string) => JSON.parse(stdout).max_context_tokens as number;

describe('config discovery', () => {
  it.each(CONFIG_FILE_NAMES)('finds ./%s in the working directory', async (name) => {
    const dir = await folderWith(name, 5_000);
    const run = await cli(['estimate', join(dir, 'request.json')], '', {}, dir);
    expect(run.stderr).toBe('');
    expect(windowOf(run.stdout)).toBe(5_000);
  });

  it('--config beats COMPACT_CONFIG, which beats the file found in the folder', async () => {
    const dir = await folderWith('compact.yaml', 5_000);
    const named = await folderWith('compact.config.json', 6_000);
    const flagged = await folderWith('compact.json', 7_000);
    const request = join(dir, 'request.json');
    const env = { COMPACT_CONFIG: join(named, 'compact.config.json') };
    expect(windowOf((await cli(['estimate', request], '', {}, dir)).stdout)).toBe(5_000);
    expect(windowOf((await cli(['estimate', request], '', env, dir)).stdout)).toBe(6_000);
    const flag = ['--config', join(flagged, 'compact.json')];
    expect(windowOf((await cli(['estimate', request, ...flag], '', env, dir)).stdout)).toBe(7_000);
  });

  it('two config files in the folder: exit 2 naming both, none guessed', async () => {
    const dir = await folderWith('compact.yaml', 5_000);
    await writeFile(join(dir, 'compact.json'), JSON.stringify({ version: 1 }));
    const run = await cli(['estimate', join(dir, 'request.json')], '', {}, dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/compact\.yaml, compact\.json.*--config FILE/);
  });

  it('the help names exactly the files read, with COMPACT_CONFIG beside --config', () => {
    const text = COMMAND_HELP.estimate!.flags['--config FILE']!;
    expect(text).toContain('COMPACT_CONFIG');
    for (const name of ['compact.yaml', 'compact.yml', 'compact.json']) expect(text).toContain(`./${name}`);
    expect(text).toContain('./compact.config.{yaml,yml,json,js,mjs}');
    expect(text).not.toContain('ts,');
  });
});

describe('the top-level help', () => {
  it('sends to COMMAND --help, which lists every flag the command accepts', async () => {
    const { generalHelp, commandHelp } = await import('./help.js');
    expect(generalHelp()).toContain('agent-compaction COMMAND --help lists every flag of COMMAND');
    for (const flag of ['--out DIR', '--trace FILE', '--strategy S', '--keep-recent-turns N', '--buffer N'])
      expect(commandHelp('replay'), flag).toContain(flag);
    for (const flag of ['--out FILE', '--trace FILE', '--strategy S', '--max-summary-tokens N'])
      expect(commandHelp('report'), flag).toContain(flag);
  });
});

describe('variables that are not settings', () => {
  it('a summary key in the environment loads no config: nothing is archived to ./.compact/archive', async () => {
    const dir = temp.path('key-only');
    await mkdir(dir, { recursive: true });
    for (const env of [
      { COMPACT_SUMMARY_KEY: 'k'.repeat(32) },
      { COMPACT_SUMMARY_KEY_FILE: join(dir, 'key') },
    ])
      expect(await loadManagerOptions(undefined, env, dir)).toEqual({});
    // A setting still loads the config (and its default archive), as docs/how-it-works.md says.
    expect((await loadManagerOptions(undefined, { COMPACT_MODEL: 'gpt-4o' }, dir)).storage?.name).toBe('fs');
  });
});
