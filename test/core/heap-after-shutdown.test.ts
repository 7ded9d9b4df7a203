/**
 * Issue 47 point 4: after `shutdown()` the heap is back within 2 MB of a fresh process's, even
 * with the manager object still referenced. What stayed before: the tokenizer's rank tables
 * (released with the last manager) and about 10 MB of compiled scripts left by reading the rank
 * files as code (now read as JSON). Measured in a child process of its own after full GCs.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../support/ensure-built.js';

const run = promisify(execFile);
const MB = 1024 * 1024;

describe('heap after shutdown', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it('is within 2 MB of the fresh process, the manager still referenced', async () => {
    const script = join(ROOT, 'test/fixtures/memory/heap-after-shutdown.mjs');
    const { stdout } = await run(process.execPath, ['--expose-gc', script, '40'], {
      cwd: ROOT,
      maxBuffer: MB,
    });
    const { fresh, held, after } = JSON.parse(stdout.trim().split('\n').at(-1) as string) as {
      fresh: number;
      held: number;
      after: number;
    };
    // The sessions took memory while held (the measure can see what it frees).
    expect(held - fresh).toBeGreaterThan(10 * MB);
    expect(after - fresh).toBeLessThanOrEqual(2 * MB);
  }, 300_000);
});
