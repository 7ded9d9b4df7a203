import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../support/ensure-built.js';

const root = new URL('../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
  exports: Record<string, unknown>;
};
const OPTIONAL_PEERS = Object.keys(pkg.peerDependencies);

beforeAll(() => ensureBuilt());

function loadedBy(entry: string): string[] {
  const log = join(mkdtempSync(join(tmpdir(), 'loads-')), 'loads.txt');
  execFileSync(
    process.execPath,
    [
      '--import',
      join(root, 'test/package/register-load-recorder.mjs'),
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(entry)})`,
    ],
    {
      cwd: root,
      env: { ...process.env, LOAD_LOG: log },
    },
  );
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

function packageOf(url: string): string | undefined {
  const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  return match?.[1];
}

describe('package boundaries', () => {
  it('the main entry loads no optional peer SDK', () => {
    const packages = new Set(loadedBy(join(root, 'dist/index.js')).map(packageOf).filter(Boolean));
    for (const peer of OPTIONAL_PEERS) expect(packages, `main entry loaded ${peer}`).not.toContain(peer);
  });

  it('agent-compaction/testing loads no test runner: the vitest suites are in testing/conformance', () => {
    const packages = new Set(loadedBy(join(root, 'dist/testing/index.js')).map(packageOf).filter(Boolean));
    expect(packages).not.toContain('vitest');
    const suites = new Set(
      loadedBy(join(root, 'dist/testing/conformance.js')).map(packageOf).filter(Boolean),
    );
    expect(suites).toContain('vitest');
  });

  it('declares every optional peer as optional', () => {
    for (const peer of OPTIONAL_PEERS) expect(pkg.peerDependenciesMeta[peer]?.optional, peer).toBe(true);
  });

  it('every bare import in dist is a dependency, a peer or a Node builtin', () => {
    const allowed = new Set([
      ...Object.keys(pkg.dependencies),
      ...Object.keys(pkg.optionalDependencies),
      ...OPTIONAL_PEERS,
      '@opentelemetry/resources',
      '@opentelemetry/core',
      '@opentelemetry/context-async-hooks',
    ]);
    const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.js')) files.push(path);
      }
    };
    walk(join(root, 'dist'));
    const unknown = new Set<string>();
    for (const file of files) {
      const source = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const match of source.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]+)['"]/g)) {
        const specifier = match[1]!;
        if (specifier.startsWith('.') || builtins.has(specifier) || builtins.has(specifier.split('/')[0]!))
          continue;
        const name = specifier.startsWith('@')
          ? specifier.split('/').slice(0, 2).join('/')
          : specifier.split('/')[0]!;
        if (!allowed.has(name)) unknown.add(`${name} (${file.slice(root.length)})`);
      }
    }
    expect([...unknown]).toEqual([]);
  });

  it('every subpath export resolves to a built file, its types too (under import and require)', () => {
    type Target = string | { [condition: string]: Target };
    const files = (target: Target): string[] =>
      typeof target === 'string' ? [target] : Object.values(target).flatMap(files);
    for (const [subpath, target] of Object.entries(pkg.exports as Record<string, Target>))
      for (const file of files(target))
        expect(existsSync(join(root, file)), `${subpath} -> ${file}`).toBe(true);
  });

  it('the LangChain middleware type-checks in a CommonJS TypeScript project (NodeNext)', () => {
    // @langchain/core ships separate CommonJS and ESM types: a CommonJS project resolves the
    // CommonJS ones, so the subpath's `require` condition gives .d.cts twins (scripts/cjs-types.mjs).
    const project = mkdtempSync(join(tmpdir(), 'cjs-langchain-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', type: 'commonjs' }));
    const modules = join(project, 'node_modules');
    mkdirSync(join(modules, '@langchain'), { recursive: true });
    mkdirSync(join(modules, '@types'), { recursive: true });
    symlinkSync(root, join(modules, 'agent-compaction'), 'dir');
    for (const peer of ['langchain', '@langchain/core', '@langchain/openai', '@types/node'])
      symlinkSync(join(root, 'node_modules', peer), join(modules, peer), 'dir');
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        files: ['agent.ts'],
      }),
    );
    writeFileSync(
      join(project, 'agent.ts'),
      [
        "import { ChatOpenAI } from '@langchain/openai';",
        "import { createAgent } from 'langchain';",
        "import { CompactManager } from 'agent-compaction';",
        "import { compactionMiddleware } from 'agent-compaction/langchain';",
        "const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });",
        "export const agent = createAgent({ model: new ChatOpenAI({ model: 'gpt-4o' }), tools: [], middleware: [compactionMiddleware(manager)] });",
      ].join('\n'),
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('every subpath loads with require() from a CommonJS project (Node 20.19+ require of ESM)', () => {
    const project = mkdtempSync(join(tmpdir(), 'cjs-consumer-'));
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', type: 'commonjs' }));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(root, join(project, 'node_modules', 'agent-compaction'), 'dir');
    const subpaths = Object.entries(pkg.exports)
      .filter(([, target]) => typeof target === 'object' && target !== null && 'require' in target)
      .map(([subpath]) => subpath.replace(/^\./, 'agent-compaction'));
    expect(subpaths).toContain('agent-compaction');
    const script = `const out = {}; for (const id of ${JSON.stringify(subpaths)}) out[id] = Object.keys(require(id)).length; console.log(JSON.stringify(out));`;
    const result = spawnSync(process.execPath, ['-e', script], { cwd: project, encoding: 'utf8' });
    expect(result.stderr).not.toMatch(/Error/);
    const counts = JSON.parse(result.stdout) as Record<string, number>;
    for (const id of subpaths) expect(counts[id], id).toBeGreaterThan(0);
  });
});
