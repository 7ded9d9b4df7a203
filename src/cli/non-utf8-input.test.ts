/**
 * Review 81d: a file that is not UTF-8 (a Latin-1 export, a UTF-16 file from Windows) is one
 * error line naming it and the line, exit 2. Before, each invalid byte became U+FFFD: `compact`
 * printed "h\uFFFDllo" as the user's message, and a config's `model: "gpt\xe9"` read as
 * another model, with exit 0.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles } from '../../test/support/cli-fixtures.js';

const temp = useTempFiles();
const latin1 = (text: string) => Buffer.from(text, 'latin1');

describe('input that is not UTF-8', () => {
  it('a Latin-1 JSONL file: exit 2, one line naming the file and line, nothing printed', async () => {
    const file = temp.path('latin1.jsonl');
    const lines = '{"role":"user","content":"hello"}\r\n{"role":"user","content":"h\u00e9llo"}\r\n';
    await writeFile(file, latin1(lines));
    for (const command of ['estimate', 'compact']) {
      const run = await cli([command, file, '--max-context', '4096']);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(`error: ${file} is not UTF-8 text (line 2; save it as UTF-8)\n`);
    }
  });

  it('a UTF-16 file says so', async () => {
    const file = temp.path('utf16.json');
    await writeFile(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('[]', 'utf16le')]));
    const run = await cli(['estimate', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(`error: ${file} is UTF-16, not UTF-8 (save it as UTF-8)\n`);
  });

  it('UTF-8 with accents, emoji and CRLF line ends reads as before', async () => {
    const line = '{"role":"user","content":"h\u00e9llo \ud83d\ude00"}\r\n';
    const file = await temp.file('utf8.jsonl', line + line);
    const run = await cli(['compact', file, '--max-context', '4096']);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)[1].content).toBe('h\u00e9llo \ud83d\ude00');
  });

  it('a Latin-1 config file: exit 2 naming it', async () => {
    const config = temp.path('latin1.yaml');
    await writeFile(config, latin1('version: 1\nmodel: "gpt\u00e9"\n'));
    const input = await temp.file('request.json', [{ role: 'user', content: 'hi' }]);
    const run = await cli(['estimate', input, '--config', config]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('latin1.yaml: (root) is not UTF-8 text (line 2; save it as UTF-8)');
  });
});
