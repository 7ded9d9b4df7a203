/**
 * Every code block of README.md, docs/*.md and the guides it links (OBSERVABILITY.md,
 * SECURITY.md, ARCHITECTURE.md) is checked as written: TypeScript is
 * type-checked against the built package and run (SDKs pointed at a local test server), the
 * CLI examples are run in document order (the replay before the status that reads its
 * archive) and the output each shows compared line by line with what runs (only timestamps
 * and elapsed seconds masked: every figure is what runs), JSON and YAML
 * parse (a config validates). A block that cannot run says why in a `doc-test: skip` comment.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { compactConfigSchema } from '../../src/config/config-schema.js';
import {
  cliCommands,
  contextNames,
  type DocBlock,
  docBlocks,
  docFiles,
  masked,
  snippetModule,
  snippetName,
  sourceReadmes,
} from '../support/doc-blocks.js';
import { ensureBuilt, ROOT } from '../support/ensure-built.js';

const run = promisify(execFile);
const FILES = docFiles(ROOT);
const BLOCKS = FILES.flatMap((file) => docBlocks(file, ROOT));
const LANGS = new Set(['ts', 'sh', 'console', 'text', 'json', 'yaml']);
const where = (block: DocBlock) => `${block.file}:${block.line}`;

beforeAll(() => ensureBuilt());

describe('doc blocks', () => {
  it('every block of README.md, docs/*.md and the guides names its language, one the tests check', () => {
    expect(BLOCKS.length).toBeGreaterThan(30);
    for (const block of BLOCKS)
      expect(LANGS.has(block.lang), `${where(block)}: \`\`\`${block.lang}`).toBe(true);
  });

  it('the README is a landing page: install line, contributor commands near the top, about 250 lines', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const lines = readme.split('\n');
    expect(lines.length).toBeLessThanOrEqual(260);
    const at = (text: string) => lines.findIndex((line) => line.includes(text));
    expect(at('npm install agent-compaction')).toBeGreaterThan(0);
    expect(at('npm install && npm run demo')).toBeLessThan(45);
    expect(at('npm install && npm test')).toBeLessThan(45);
    expect(readme).toContain('`/langchain`');
    for (const doc of [
      'docs/configuration.md',
      'docs/cli.md',
      'OBSERVABILITY.md',
      'docs/report.md',
      'SECURITY.md',
      'ARCHITECTURE.md',
    ])
      expect(readme).toContain(`](${doc})`);
  });

  it('speaks to readers: no internal jargon (spec numbers, issue numbers) in the docs and the source READMEs', async () => {
    for (const file of [...FILES, ...sourceReadmes(ROOT)]) {
      const text = await readFile(file, 'utf8');
      expect(text, file).not.toMatch(/\bspec \d{3}\b|\bissue \d+\b/i);
    }
  });

  it('every repository path the docs name in code spans exists', async () => {
    const missing: string[] = [];
    for (const file of FILES) {
      const text = await readFile(file, 'utf8');
      for (const [, span] of text.matchAll(
        /`((?:src|test|bench|eval|scripts|examples|schema|docs|api)\/[\w./-]+)`/g,
      )) {
        const path = span!.replace(/:\d+$/, '');
        if (!existsSync(join(ROOT, path))) missing.push(`${file.slice(ROOT.length + 1)}: ${span}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('JSON and YAML blocks parse; a configuration validates against the schema', () => {
    for (const block of BLOCKS.filter((b) => b.lang === 'json' || b.lang === 'yaml')) {
      const value = block.lang === 'json' ? JSON.parse(block.code) : parseYaml(block.code);
      if (value && typeof value === 'object' && 'version' in value) {
        const parsed = compactConfigSchema.safeParse(value);
        expect(parsed.success, `${where(block)}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      }
    }
  });
});

describe('CLI examples run as documented', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-compaction-docs-'));
    // The examples run from a folder holding docs/examples, as from the repository root.
    await cp(join(ROOT, 'docs', 'examples'), join(dir, 'docs', 'examples'), { recursive: true });
    const bin = join(dir, 'bin');
    await mkdir(bin);
    await writeFile(
      join(bin, 'agent-compaction'),
      `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'dist/cli/main.js')}" "$@"\n`,
    );
    await chmod(join(bin, 'agent-compaction'), 0o755);
    // No summary key is given: a summary's mark is the same number of tokens under any key, so
    // the docs' figures hold with the key file this machine generates.
    env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      NO_COLOR: '1',
    };
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const file of FILES) {
    const blocks = docBlocks(file, ROOT).filter((block) => block.lang === 'sh' || block.lang === 'console');
    const commands = blocks.flatMap((block) => cliCommands(block).map((command) => ({ ...command, block })));
    if (commands.length === 0) continue;
    it(`${blocks[0]!.file}: every agent-compaction command`, async () => {
      for (const { command, output, block } of commands) {
        if (block.skip) continue;
        const result = await run('sh', ['-c', command], { cwd: dir, env, maxBuffer: 64 << 20 }).catch(
          (error: { code?: number; stderr?: string }) => {
            throw new Error(`${where(block)}: \`${command}\` exited ${error.code}: ${error.stderr}`);
          },
        );
        if (output !== undefined) {
          // The block shows the output's first lines (all of it, or a head): as printed.
          const actual = result.stdout.split('\n').slice(0, output.length).map(masked);
          expect(actual, `${where(block)}: output of \`${command}\``).toEqual(output.map(masked));
        }
      }
    });
  }
});

describe('TypeScript snippets compile and run', () => {
  // A skipped snippet (a sketch with names of the reader's own) is neither compiled nor run.
  const snippets = BLOCKS.filter((block) => block.lang === 'ts' && !block.skip);
  const out = join(ROOT, '.tmp', 'doc-snippets');

  beforeAll(async () => {
    await rm(out, { recursive: true, force: true });
    await mkdir(out, { recursive: true });
    for (const block of snippets) await writeFile(join(out, snippetName(block)), snippetModule(block));
    // The configuration the snippets load by name.
    await cp(join(ROOT, 'docs', 'examples', 'compact.yaml'), join(out, 'compact.yaml'));
    await writeFile(
      join(out, 'tsconfig.json'),
      JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { noEmit: true }, include: ['.'] }),
    );
  });

  it('type-check against the built package (strict)', async () => {
    const tsgo = join(ROOT, 'node_modules', '.bin', 'tsgo');
    const checked = await run(tsgo, ['-p', join(out, 'tsconfig.json')], { cwd: ROOT }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? 'failed', failed: true }),
    );
    expect('failed' in checked ? checked.stdout : '').toBe('');
  });

  it('run, each against a local provider server (fragments: compiled only)', {
    timeout: 600_000,
  }, async () => {
    // A fragment names what the text around it made (a manager, the reader's messages).
    const runnable = snippets.filter((block) => contextNames(block).length === 0);
    expect(runnable.length).toBeGreaterThanOrEqual(snippets.length / 2);
    const names = runnable.map(snippetName);
    const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
    const { stdout } = await run(tsx, [join(ROOT, 'test/support/run-doc-snippets.ts'), out, ...names], {
      cwd: ROOT,
      maxBuffer: 64 << 20,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    for (const name of names) {
      const section = new RegExp(`=== snippet ${name}\\n([\\s\\S]*?)=== end ${name} \\((ok|failed)\\)`).exec(
        stdout,
      );
      expect(section, `${name} did not run`).not.toBeNull();
      expect(section![2], `${name} failed:\n${section![1]}`).toBe('ok');
    }
  });
});
