/**
 * Review 81d (a new user's trial): config files as editors and habits write them. A camelCase
 * key is named as the file holds it, never as a CLI flag; a JSON file saved with a byte-order
 * mark (Windows editors) reads as the same file without it, as a YAML one does. A YAML tag the
 * parser cannot resolve (`!!js/function`) is an error, not a plain string with Node's warning;
 * a YAML error says where once. Review 82u: a key given twice in a JSON file was taken
 * silently (the last value) where YAML refuses it; now one line names the key and its line.
 */
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles } from '../../test/support/cli-fixtures.js';

const temp = useTempFiles();
const request = [{ role: 'user', content: 'Where is the invoice total computed?' }];

describe('config file errors, as the file holds its keys', () => {
  it('a camelCase key is named by its path in the file, with the snake_case key to write', async () => {
    const config = await temp.file(
      'camel.yaml',
      'maxContextTokens: 5000\npolicy:\n  keepRecentTurns: 2\n  triggerPct: 0.5\n',
    );
    const run = await cli(['estimate', await temp.file('request.json', request), '--config', config]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('maxContextTokens is not a known key (did you mean "max_context_tokens"?)');
    expect(run.stderr).toContain(
      'policy.keepRecentTurns is not a known key (did you mean "keep_recent_turns"?)',
    );
    expect(run.stderr).toContain('policy.triggerPct is not a known key (did you mean "trigger_pct"?)');
    expect(run.stderr).not.toMatch(/--(max-context|keep-recent-turns|trigger-pct)/);
  });

  it('a manager option error still names the flag that sets it', async () => {
    const run = await cli([
      'compact',
      await temp.file('request-2.json', request),
      '--max-context',
      '1000',
      '--buffer',
      '1000',
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--buffer must be smaller than --max-context');
  });

  it('a JSON config with a byte-order mark reads as without it', async () => {
    const config = await temp.file(
      'bom.json',
      `\uFEFF${JSON.stringify({ version: 1, max_context_tokens: 5000 })}`,
    );
    const run = await cli(['estimate', await temp.file('request-3.json', request), '--config', config]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).max_context_tokens).toBe(5000);
  });
});

describe('a key given twice in a JSON config', () => {
  it('exit 2, one line naming the key path and the line of its second use', async () => {
    const text =
      '{\n  "version": 1,\n  "policy": {\n    "trigger_pct": 0.5,\n    "keep_recent_turns": 2,\n    "trigger_pct": 0.9\n  }\n}\n';
    const config = await temp.file('twice.json', text);
    const run = await cli(['estimate', await temp.file('request-7.json', request), '--config', config]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      `error: ${config}: policy.trigger_pct is given twice (line 6; a key may appear once in an object)`,
    ]);
  });
});

describe('YAML the parser only warns about', () => {
  it('an unresolved tag: exit 2 naming the line, the value not read as a string', async () => {
    const config = await temp.file('tag.yaml', 'version: 1\nmodel: !!js/function "x"\n');
    const run = await cli(['estimate', await temp.file('request-4.json', request), '--config', config]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `error: ${config}: (root) is not valid YAML at line 2, column 8: Unresolved tag: tag:yaml.org,2002:js/function\n`,
    );
  });

  it('a YAML error says where once', async () => {
    const config = await temp.file('tab.yaml', 'policy:\n  trigger_pct: 0.8\n\tkeep: 1\n');
    const run = await cli(['estimate', await temp.file('request-5.json', request), '--config', config]);
    expect(run.stderr).toBe(
      `error: ${config}: (root) is not valid YAML at line 3, column 1: Tabs are not allowed as indentation\n`,
    );
  });
});
