#!/usr/bin/env node
/**
 * Packs the repository as npm would publish it, installs the tarball into fresh projects
 * (from the npm cache where it can, the registry otherwise), and checks what a user gets:
 *
 * - the tarball holds dist (code and types), the schema, README, ARCHITECTURE, SECURITY,
 *   OBSERVABILITY, docs/ and LICENSE, and no tests;
 * - the quick start type-checks under NodeNext (ESM and CommonJS) and bundler resolution,
 *   and runs under Node in an ESM and in a CommonJS project.
 *
 * Needs a build (`npm run build`; `npm test` builds first). Usage: `npm run pack:check`.
 * Exit code 0 when every check passes; each failure is printed on one line.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(new URL('..', import.meta.url).pathname);
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const typesNode = JSON.parse(
  readFileSync(join(root, 'node_modules/@types/node/package.json'), 'utf8'),
).version;
const failures = [];
const check = (ok, message) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${message}`);
  if (!ok) failures.push(message);
};
const run = (command, args, cwd) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

// 1. The tarball.
const work = mkdtempSync(join(tmpdir(), 'pack-check-'));
const [packed] = JSON.parse(
  run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], root),
);
const files = new Set(packed.files.map((file) => file.path));
for (const required of [
  'dist/index.js',
  'dist/index.d.ts',
  'dist/cli/main.js',
  'schema/compact.schema.json',
  'README.md',
  'ARCHITECTURE.md',
  'SECURITY.md',
  'OBSERVABILITY.md',
  'LICENSE',
  'docs/integrations.md',
  'docs/configuration.md',
  'package.json',
]) {
  check(files.has(required), `tarball holds ${required}`);
}
check(![...files].some((file) => /\.test\.(js|d\.ts)$/.test(file)), 'tarball holds no test files');
console.log(`     ${packed.filename}: ${files.size} files, ${(packed.size / 1024).toFixed(0)} kB`);
const tarball = join(work, packed.filename);

// 2. Projects that install it.
const IMPORT = "import { CompactManager, compactMessages } from 'agent-compaction';\n";
const BODY = `const history = [
  { role: 'system', content: 'You are a coding agent.' },
  { role: 'user', content: 'Fix the flaky login test. Never touch the payments module.' },
  ...Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 === 0 ? 'assistant' : 'user',
    content: \`step \${i}: \` + 'lorem ipsum dolor sit amet '.repeat(60),
  })),
];
const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 4_000 });
const messages = await manager.preflight('quick-start', history);
const one = await compactMessages(history, { model: 'gpt-4o', maxTokens: 4_000 });
await manager.shutdown();
const sent = JSON.stringify(messages);
if (!sent.includes('payments module') || one.tokensAfter > 4_000 || !one.applied) {
  throw new Error('quick start: the compacted request lost the request or is over the budget');
}
console.log(\`quick start: \${history.length} -> \${messages.length} messages, \${one.tokensBefore} -> \${one.tokensAfter} tokens\`);
`;
const QUICK_START = `${IMPORT}\n${BODY}`;
// CommonJS has no top-level await.
const QUICK_START_CJS = `${IMPORT}\nasync function main(): Promise<void> {\n${BODY}}\nvoid main();\n`;

function project(name, type, source) {
  const dir = join(work, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, type }, null, 2));
  writeFileSync(join(dir, 'src/index.ts'), source);
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      tarball,
      `@types/node@${typesNode}`,
    ],
    dir,
  );
  return dir;
}

function typecheck(dir, label, compilerOptions) {
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, target: 'es2022', outDir: 'out', types: ['node'], ...compilerOptions },
      include: ['src'],
    }),
  );
  try {
    run(process.execPath, [tsc, '-p', '.'], dir);
    check(true, `${label}: the quick start type-checks`);
    return true;
  } catch (error) {
    check(
      false,
      `${label}: tsc failed: ${String(error.stdout || error.message)
        .split('\n')
        .slice(0, 5)
        .join(' | ')}`,
    );
    return false;
  }
}

function runs(dir, label) {
  try {
    const out = run(process.execPath, ['out/index.js'], dir);
    check(/quick start:/.test(out), `${label}: runs under node (${out.trim()})`);
  } catch (error) {
    check(
      false,
      `${label}: node failed: ${String(error.stderr || error.message)
        .split('\n')
        .slice(0, 5)
        .join(' | ')}`,
    );
  }
}

const esm = project('esm-consumer', 'module', QUICK_START);
if (typecheck(esm, 'ESM, NodeNext', { module: 'nodenext', moduleResolution: 'nodenext' }))
  runs(esm, 'ESM, NodeNext');
typecheck(esm, 'ESM, bundler', { module: 'esnext', moduleResolution: 'bundler', noEmit: true });

const cjs = project('cjs-consumer', 'commonjs', QUICK_START_CJS);
if (typecheck(cjs, 'CommonJS, NodeNext', { module: 'nodenext', moduleResolution: 'nodenext' }))
  runs(cjs, 'CommonJS, NodeNext');
try {
  const out = run(
    process.execPath,
    ['-e', "console.log(typeof require('agent-compaction').compactMessages)"],
    cjs,
  );
  check(out.trim() === 'function', 'CommonJS: require("agent-compaction") from plain JS');
} catch (error) {
  check(false, `CommonJS: require failed: ${String(error.stderr || error.message).split('\n')[0]}`);
}

console.log(failures.length === 0 ? 'pack check: all passed' : `pack check: ${failures.length} failed`);
// The projects hold an install each (about 100 MB): kept only when asked, to read after a failure.
if (process.env.PACK_CHECK_KEEP === '1') console.log(`pack check: projects kept in ${work}`);
else rmSync(work, { recursive: true, force: true });
process.exit(failures.length === 0 ? 0 : 1);
