import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeDirs, makeDirsSync } from './make-dirs.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function scratch(): string {
  const root = mkdtempSync(join(tmpdir(), 'make-dirs-'));
  roots.push(root);
  return root;
}

/** The error a call ends with (undefined when it succeeds). */
async function outcome(run: () => unknown): Promise<NodeJS.ErrnoException | undefined> {
  try {
    await run();
    return undefined;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

describe.each([
  ['makeDirs', makeDirs],
  ['makeDirsSync', makeDirsSync],
] as const)('%s', (_name, make) => {
  it('makes the missing folders with the mode; an existing folder is fine', async () => {
    const dir = join(scratch(), 'a', 'b', 'c');
    await make(dir, 0o700);
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(statSync(join(dir, '..', '..')).mode & 0o777).toBe(0o700);
    await make(dir, 0o700);
    expect(existsSync(dir)).toBe(true);
  });

  it('refuses a path whose folder is a file, with the cause', async () => {
    const file = join(scratch(), 'file');
    writeFileSync(file, 'x');
    expect((await outcome(() => make(file)))?.code).toBe('EEXIST');
    expect((await outcome(() => make(join(file, 'below'))))?.code).toBe('ENOTDIR');
  });

  // Node 20's recursive mkdir never settles here (it loops between the folder and its parent
  // with one CPU busy): an archive or a trace asked for under /proc held the call forever.
  it.runIf(process.platform === 'linux')(
    'settles with ENOENT under /proc, where no folder can be made',
    async () => {
      const error = await outcome(() => make('/proc/agent-compaction-no-such/archive'));
      expect(error?.code).toBe('ENOENT');
    },
  );
});
