/**
 * Runs the built `agent-compaction` bin (dist/cli/main.js) as a child process, building it
 * first when it is missing or older than the CLI and core sources.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
/** The bin the package declares. */
export const BIN = join(ROOT, 'dist/cli/main.js');

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when the bin is missing or stale (`tsc -p tsconfig.build.json`). */
export function ensureBuilt(): void {
  const sources = Math.max(newestSource(join(ROOT, 'src/core')), newestSource(join(ROOT, 'src/cli')));
  if (existsSync(BIN) && statSync(BIN).mtimeMs >= sources) return;
  try {
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      { cwd: ROOT, stdio: 'pipe' },
    );
  } catch (error) {
    // Type errors elsewhere in the tree still emit; only a missing bin is fatal.
    if (!existsSync(BIN)) throw error;
  }
}

/** The outcome of one CLI process. */
export interface BinRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/cli/main.js ...args`, writing `stdin` to it when given. */
export function runBin(args: readonly string[], stdin?: string): Promise<BinRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}
