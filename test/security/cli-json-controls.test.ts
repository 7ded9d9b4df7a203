import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { jsonTerminalText } from '../../src/cli/terminal-text.js';

/**
 * Issue 44 point 6: the CLI's JSON output (`compact`, `status --json`) prints C1 controls
 * (U+009B, the one-byte CSI) and bidi overrides (U+202E) as `\u` escapes, never raw, and stays
 * exact JSON: parsed, it gives back the very characters.
 */

const HOSTILE = 'look \u009b31m red \u202eevil\u202c and \u2028 line';

describe('CLI JSON output escapes terminal controls', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cli-json-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(argv: string[]): Promise<string> {
    let out = '';
    const code = await runCli(argv, {
      stdin: Readable.from([]),
      stdout: (text) => {
        out += text;
      },
      stderr: () => {},
      env: {},
    });
    expect(code).toBe(0);
    return out;
  }

  it('compact: no raw C1 or bidi character, and the parsed messages hold them', async () => {
    const input = join(dir, 'history.json');
    const messages = [
      { role: 'user', content: HOSTILE },
      { role: 'assistant', content: `ok ${HOSTILE}` },
    ];
    await writeFile(input, JSON.stringify(messages));
    const out = await run(['compact', input, '--max-context', '100000']);
    expect(out).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2028]/);
    expect(out).toContain('\\u009b');
    expect(out).toContain('\\u202e');
    expect(JSON.stringify(JSON.parse(out))).toContain(HOSTILE);
  });

  it('any JSON the CLI prints (status --json included) goes through the same escape', () => {
    const text = JSON.stringify({ session: HOSTILE, nested: [HOSTILE] }, null, 2);
    const out = jsonTerminalText(text);
    expect(out).not.toMatch(/[\u0080-\u009f\u202a-\u202e\u2028]/);
    expect(JSON.parse(out)).toEqual(JSON.parse(text));
  });
});
