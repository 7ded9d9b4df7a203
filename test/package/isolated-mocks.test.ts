/**
 * Most test files share one module graph per worker (`isolate: false` in vitest.config.ts). A
 * module mock (`vi.mock`) then applies only if no earlier file in that worker imported the
 * mocked module's importer with the real module: such a file passes alone and fails beside
 * others, as src/cli/state-file.test.ts did in a loaded rehearsal (its fs fault never reached
 * state-file.js). Every file that mocks a module must run in a graph of its own.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/ensure-built.js';

/** The `ISOLATED` list of vitest.config.ts, read as text (the config does not export it). */
function isolatedFiles(): Set<string> {
  const config = readFileSync(join(ROOT, 'vitest.config.ts'), 'utf8');
  const block = /const ISOLATED = \[([\s\S]*?)\];/.exec(config);
  if (block === null) throw new Error('vitest.config.ts has no ISOLATED list');
  return new Set([...(block[1] as string).matchAll(/^\s*'([^']+)',/gm)].map((match) => match[1] as string));
}

function testFiles(): string[] {
  return ['src', 'test', 'eval'].flatMap((root) =>
    readdirSync(join(ROOT, root), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) =>
        relative(ROOT, join(ROOT, root, name))
          .split(sep)
          .join('/'),
      ),
  );
}

describe('module mocks', () => {
  it('every test file that mocks a module runs isolated', () => {
    const isolated = isolatedFiles();
    const mocking = testFiles().filter((file) =>
      /\bvi\.(do)?[mM]ock\(/.test(readFileSync(join(ROOT, file), 'utf8')),
    );
    expect(mocking).toContain('src/cli/state-file.test.ts');
    expect(mocking.filter((file) => !isolated.has(file))).toEqual([]);
  });
});
