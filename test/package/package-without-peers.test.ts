/**
 * Review 81d: the package installed without its optional peers, as a new user has it. The
 * entries that need no SDK type-check in a project that has none, with
 * skipLibCheck off (tsc's default), under node16 and bundler resolution. The package is copied,
 * not linked: a link resolves the peers from this repository's node_modules. Before, the
 * declarations of `agent-compaction/config` imported `openai`, `ai` and `@anthropic-ai/sdk`
 * types (toManagerOptions' client options): "Cannot find module 'openai'" in any such project.
 * The CLI names the packages a command needs: `proxy` printed Node's "Cannot find package
 * 'hono' imported from .../create-proxy-app.js" where `mcp` said what to install.
 * Review 82u: so did `import 'agent-compaction/proxy'` in code (hono was imported statically);
 * now the import works and the first use throws `missing_dependency` naming both packages.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../support/ensure-built.js';

/** The entries whose use needs no optional peer. */
const PEER_FREE = [
  '',
  '/config',
  '/counting',
  '/summarizers',
  '/exporters',
  '/recall',
  '/storage/fs',
  '/testing',
];

const project = mkdtempSync(join(tmpdir(), 'package-without-peers-'));

beforeAll(() => {
  ensureBuilt();
  const target = join(project, 'node_modules', 'agent-compaction');
  mkdirSync(target, { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(target, 'package.json'));
  cpSync(join(ROOT, 'schema'), join(target, 'schema'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(target, 'dist'), {
    recursive: true,
    filter: (source) => !source.endsWith('.map'),
  });
  // The dependencies are installed with the package; the peers are not.
  const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const name of Object.keys(dependencies))
    symlinkSync(join(ROOT, 'node_modules', name), join(project, 'node_modules', name), 'dir');
  mkdirSync(join(project, 'node_modules', '@types'));
  symlinkSync(
    join(ROOT, 'node_modules', '@types', 'node'),
    join(project, 'node_modules', '@types', 'node'),
    'dir',
  );
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module' }));
  const imports = PEER_FREE.map((subpath, i) => `import * as entry${i} from 'agent-compaction${subpath}';`);
  writeFileSync(
    join(project, 'consumer.ts'),
    [
      ...imports,
      "import { CompactManager } from 'agent-compaction';",
      "import { loadConfig, toManagerOptions } from 'agent-compaction/config';",
      "const manager = new CompactManager(await toManagerOptions(await loadConfig({ file: 'compact.yaml' })));",
      `console.log(manager, ${PEER_FREE.map((_, i) => `entry${i}`).join(', ')});`,
    ].join('\n'),
  );
});

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('types without the optional peers', () => {
  it.each([
    ['node16', 'node16'],
    ['esnext', 'bundler'],
  ])(
    'module %s, moduleResolution %s, skipLibCheck off: no error',
    (module, moduleResolution) => {
      const config = join(project, `tsconfig.${moduleResolution}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          compilerOptions: {
            target: 'es2022',
            module,
            moduleResolution,
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            types: ['node'],
          },
          files: ['consumer.ts'],
        }),
      );
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const result = spawnSync(process.execPath, [tsc, '-p', config], { encoding: 'utf8' });
      expect(result.stdout + result.stderr).toBe('');
      expect(result.status).toBe(0);
      // The copy really has no peer beside it.
      expect(() => readFileSync(join(project, 'node_modules', 'openai', 'package.json'))).toThrow();
    },
    120_000,
  );
});

describe('the CLI without the optional peers', () => {
  const bin = () => join(project, 'node_modules', 'agent-compaction', 'dist', 'cli', 'main.js');
  it.each([
    [['proxy', '--upstream', 'http://127.0.0.1:9', '--port', '0'], 'npm i hono @hono/node-server'],
    [['mcp', '--archive', '.', '--session', 'x'], 'npm i @modelcontextprotocol/sdk'],
  ])(
    '%j: exit 2, one line naming what to install',
    (argv, install) => {
      const result = spawnSync(process.execPath, [bin(), ...argv], {
        cwd: project,
        encoding: 'utf8',
        input: '',
      });
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(install)]);
      expect(result.status).toBe(2);
    },
    60_000,
  );
});

describe('agent-compaction/proxy without hono', () => {
  it('imports; createProxyApp and startProxy throw missing_dependency naming both packages', () => {
    const script = [
      "import { CompactManager } from 'agent-compaction';",
      "import { createProxyApp, SESSION_HEADER, startProxy } from 'agent-compaction/proxy';",
      "const manager = new CompactManager({ model: 'gpt-4o' });",
      'const seen = [SESSION_HEADER];',
      "try { createProxyApp({ upstream: 'http://127.0.0.1:9', manager }); } catch (e) { seen.push([e.name, e.code, e.message]); }",
      "await startProxy({ upstream: 'http://127.0.0.1:9', manager, port: 0 }).catch((e) => seen.push([e.name, e.code, e.message]));",
      'console.log(JSON.stringify(seen));',
      'await manager.shutdown();',
    ].join('\n');
    writeFileSync(join(project, 'proxy-use.mjs'), script);
    const result = spawnSync(process.execPath, ['proxy-use.mjs'], { cwd: project, encoding: 'utf8' });
    expect(result.stderr).toBe('');
    const install = 'the proxy needs hono and @hono/node-server: npm i hono @hono/node-server';
    expect(JSON.parse(result.stdout)).toEqual([
      'x-compaction-session',
      ['CompactError', 'missing_dependency', install],
      ['CompactError', 'missing_dependency', install],
    ]);
  }, 60_000);
});
