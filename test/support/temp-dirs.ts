import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/**
 * Registers the removal, after each test, of the temporary folders a test file makes, and
 * returns the function that makes one (`name` is the folder name's prefix).
 */
export function useTempDirs(): (name: string) => Promise<string> {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  return async (name) => {
    const dir = await mkdtemp(join(tmpdir(), name));
    dirs.push(dir);
    return dir;
  };
}

/** Every file under `root` (at any depth) with its text. */
export async function filesUnder(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(path, await readFile(path, 'utf8'));
  }
  return files;
}
