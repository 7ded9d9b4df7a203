/**
 * docs/cli.md opens with "the full synopsis" (README.md sends readers there for it): every
 * command the CLI has, each with every flag its `--help` lists.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../src/cli/help.js';

const cliDoc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'cli.md'), 'utf8');
/** The first text block of docs/cli.md, one entry per command (continuation lines joined). */
const synopsis = (() => {
  const block = /```text\n([\s\S]*?)```/.exec(cliDoc)?.[1] ?? '';
  const entries: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('agent-compaction ')) entries.push(line);
    else if (line.trim() !== '' && entries.length > 0) entries[entries.length - 1] += ` ${line.trim()}`;
  }
  return entries;
})();

describe('docs/cli.md synopsis', () => {
  for (const [command, help] of Object.entries(COMMAND_HELP)) {
    it(`lists ${command} with every flag of its --help`, () => {
      const lines = synopsis.filter((line) => line.startsWith(`agent-compaction ${command} `));
      expect(lines, `no synopsis line for ${command}`).not.toHaveLength(0);
      const text = lines.join(' ');
      const missing = Object.keys(help.flags)
        .map((flag) => flag.split(' ')[0]!)
        .filter((flag) => !new RegExp(`${flag}(?![\\w-])`).test(text));
      expect(missing).toEqual([]);
    });
  }
});

describe('--help usage lines', () => {
  for (const [command, help] of Object.entries(COMMAND_HELP)) {
    it(`${command}: its usage line names every flag its --help lists, as docs/cli.md does`, () => {
      const missing = Object.keys(help.flags)
        .map((flag) => flag.split(' ')[0]!)
        .filter((flag) => !new RegExp(`${flag}(?![\\w-])`).test(help.usage));
      expect(missing).toEqual([]);
    });
  }
});
