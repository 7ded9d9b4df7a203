/**
 * After `endSession` and the last manager's `shutdown()`, no string of a session's text is
 * left in the heap (issue 47 point 4). Found by heap-snapshot diffs of the heap-after-shutdown
 * fixture: the redactor's memo of its last four verdicts kept slices of the texts it read (a
 * secret and up to 1 KB around it, `password = "s3cr3t0x"` here), and V8's record of the last
 * regular-expression match kept its whole subject (the last summary written). Strings cannot
 * be held weakly: the check reads heap snapshots, in a process of its own (plain Node, the
 * built package), see test/fixtures/memory/session-text-after-shutdown.mjs.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from '../support/ensure-built.js';

const run = promisify(execFile);

async function measure(order: string): Promise<{ whileServed: number; after: string[] }> {
  const script = join(ROOT, 'test/fixtures/memory/session-text-after-shutdown.mjs');
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', '--no-concurrent-recompilation', script, order],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) as string) as { whileServed: number; after: string[] };
}

describe('session text after shutdown', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it.each([
    ['the session served last (the last match is on its summary)', 'session-last'],
    ['a text redacted last (the redactor memo holds its pieces)', 'redacted-last'],
  ])('none is left: %s', async (_label, order) => {
    const { whileServed, after } = await measure(order);
    // While served the tag is in the heap many times (the check sees it).
    expect(whileServed).toBeGreaterThan(10);
    expect(after).toEqual([]);
  });
});
