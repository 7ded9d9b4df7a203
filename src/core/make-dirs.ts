/**
 * `mkdir -p` without Node's recursive mkdir. On Node 20 a recursive mkdir never returns when a
 * folder's mkdir answers ENOENT under a parent that exists (a path under /proc or /sys): it
 * makes the parent, retries the folder, and loops with one CPU busy, so an archive or a trace
 * asked for there held the call forever. Here each missing folder is made on its own, top
 * down, once: a folder that still cannot be made throws its own error (ENOENT, EROFS, EACCES,
 * ENOTDIR), which also names the real cause where the recursive call said only ENOENT.
 */
import { mkdirSync, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

/** The folders to make, deepest first, after the walk up stopped at one that exists. */
function missingStep(error: unknown, folder: string, missing: string[]): string {
  if (codeOf(error) !== 'ENOENT') throw error;
  const parent = dirname(folder);
  if (parent === folder) throw error;
  missing.push(folder);
  return parent;
}

/** Makes `dir` and its missing parents (with `mode`); an existing folder is fine. */
export async function makeDirs(dir: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  let folder = resolve(dir);
  for (;;) {
    try {
      await mkdir(folder, { mode });
      break;
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') folder = missingStep(error, folder, missing);
      else if (missing.length > 0 || (await stat(folder)).isDirectory()) break;
      else throw error;
    }
  }
  for (const made of missing.reverse()) await mkdir(made, { mode }).catch(existsOrThrow);
}

/** {@link makeDirs}, synchronously. */
export function makeDirsSync(dir: string, mode?: number): void {
  const missing: string[] = [];
  let folder = resolve(dir);
  for (;;) {
    try {
      mkdirSync(folder, { mode });
      break;
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') folder = missingStep(error, folder, missing);
      else if (missing.length > 0 || statSync(folder).isDirectory()) break;
      else throw error;
    }
  }
  for (const made of missing.reverse()) {
    try {
      mkdirSync(made, { mode });
    } catch (error) {
      existsOrThrow(error);
    }
  }
}

/** Another process made the folder meanwhile: fine; anything else is thrown. */
function existsOrThrow(error: unknown): void {
  if (codeOf(error) !== 'EEXIST') throw error;
}
