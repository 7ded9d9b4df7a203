/**
 * After `shutdown()` the heap is back near a fresh process's, even with the manager object
 * still referenced. What stayed before: the tokenizer's rank tables (released with the last
 * manager) and about 10 MB of compiled scripts left by reading the rank files as code (now read
 * as JSON). Measured in child processes of their own after full GCs.
 *
 * What remains is V8's compiled code and bytecode for the functions that ran (about 1.1 MB,
 * growing with how hot the paths got, not with sessions), plus the metadata compiling leaves
 * (hidden classes, internalized names): 1.9–2.2 MB of heap in all. So the test asserts the parts
 * that could hide a leak: what the process holds besides compiled code is within 2 MB of a fresh
 * process's, and serving four times the sessions leaves no more behind.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../support/ensure-built.js';

const run = promisify(execFile);
const MB = 1024 * 1024;

interface Heap {
  used: number;
  code: number;
}
interface Figures {
  fresh: Heap;
  held: Heap;
  after: Heap;
}

async function measure(sessions: number): Promise<Figures> {
  const script = join(ROOT, 'test/fixtures/memory/heap-after-shutdown.mjs');
  const { stdout } = await run(process.execPath, ['--expose-gc', script, String(sessions)], {
    cwd: ROOT,
    maxBuffer: MB,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as Figures;
}

const data = (heap: Heap) => heap.used - heap.code;

describe('heap after shutdown', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it('holds nothing for sessions once shut down, the manager still referenced', async () => {
    const few = await measure(40);
    const many = await measure(160);
    for (const { fresh, held } of [few, many]) {
      // The sessions took memory while held (the measure can see what it frees).
      expect(held.used - fresh.used).toBeGreaterThan(10 * MB);
    }
    // Besides compiled code, the heap is within 2 MB of the fresh process's.
    expect(data(few.after) - data(few.fresh)).toBeLessThanOrEqual(2 * MB);
    expect(data(many.after) - data(many.fresh)).toBeLessThanOrEqual(2 * MB);
    // 120 more sessions leave less than 1 MB more behind (under 9 KB each), code included.
    expect(many.after.used - many.fresh.used - (few.after.used - few.fresh.used)).toBeLessThan(1 * MB);
    // And the whole heap, compiled code included, stays within 3 MB.
    expect(many.after.used - many.fresh.used).toBeLessThanOrEqual(3 * MB);
  });
});
