/**
 * The README.md of a source folder tells a newcomer what each file there is for: it names, in
 * backticks, every non-test .ts file directly in its folder (`name.ts`) and every subfolder
 * (`name/`), so a file added without a line fails here. Every folder of src/core with more than
 * four such files has a README.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceReadmes } from '../support/doc-blocks.js';
import { ROOT } from '../support/ensure-built.js';

/** Files and subfolders a folder's README must name: `name.ts` (tests left out) and `name/`. */
function namesOf(folder: string): string[] {
  const names: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.isDirectory()) names.push(`${entry.name}/`);
    else if (entry.name.endsWith('.ts') && !/\.test(-d)?\.ts$/.test(entry.name)) names.push(entry.name);
  }
  return names.sort();
}

/** Every folder under `folder`, itself included. */
function foldersUnder(folder: string): string[] {
  const nested = readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => foldersUnder(join(folder, entry.name)));
  return [folder, ...nested].sort();
}

describe('source folder READMEs', () => {
  it('each README under src/ names every file and subfolder of its folder', () => {
    const readmes = sourceReadmes(ROOT);
    expect(readmes.length).toBeGreaterThan(0);
    const unnamed: string[] = [];
    for (const readme of readmes) {
      const text = readFileSync(readme, 'utf8');
      const folder = dirname(readme);
      for (const name of namesOf(folder)) {
        if (!text.includes(`\`${name}\``)) unnamed.push(`${relative(ROOT, readme)}: \`${name}\``);
      }
    }
    expect(unnamed).toEqual([]);
  });

  it('each folder of src/core with more than four files has a README', () => {
    const without = foldersUnder(join(ROOT, 'src', 'core'))
      .filter((folder) => namesOf(folder).filter((name) => name.endsWith('.ts')).length > 4)
      .filter((folder) => !existsSync(join(folder, 'README.md')))
      .map((folder) => relative(ROOT, folder));
    expect(without).toEqual([]);
  });
});
