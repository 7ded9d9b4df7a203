/**
 * Runs the built `agent-compaction` bin (dist/cli/main.js) as a child process, building it
 * first when it is missing or older than the sources (`ensureBuilt`).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ensureBuilt, ROOT } from '../../support/ensure-built.js';

export { ensureBuilt, ROOT };
/** The bin the package declares. */
export const BIN = join(ROOT, 'dist/cli/main.js');

/** The outcome of one CLI process. */
export interface BinRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node dist/cli/main.js ...args`, writing `stdin` to it when given; in `where.cwd` (the
 * repository by default) with `where.env` added to the environment.
 */
export function runBin(
  args: readonly string[],
  stdin?: string,
  where: { cwd?: string; env?: Record<string, string> } = {},
): Promise<BinRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: where.cwd ?? ROOT,
      env: { ...process.env, ...where.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
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
