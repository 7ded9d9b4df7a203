/**
 * The fs archive remembered every session folder it opened (and every artifact folder it
 * made) for the life of the adapter: a long-running process serving many sessions grew by each
 * one, never freed. Now it remembers the last `maxSessions` used; a folder forgotten is opened
 * again on its next write (made, checked, dead writers' temp files removed), and a temp file of
 * a write of this process still in flight is never taken for a dead one.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { tempsInFlight } from './archive-files.js';
import { archiveFolders, removeStaleTemps } from './archive-folders.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function endedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

it('remembers the last maxSessions folders opened: one forgotten is opened (and cleaned) again', async () => {
  const root = await mkdtemp(join(tmpdir(), 'archive-folders-'));
  dirs.push(root);
  const folders = archiveFolders(root, {}, 2);
  const first = await folders.sessionDir('s0');
  const stale = `summary-001-abc.json.${await endedPid()}.0123456789ab.tmp`;
  await writeFile(join(first, stale), '{');
  // Still remembered: not opened again, the temp file stays.
  await folders.sessionDir('s1');
  await folders.sessionDir('s0');
  expect(await readdir(first)).toEqual([stale]);
  // Two other sessions since: s0 was forgotten, and its next write opens it again.
  await folders.sessionDir('s1');
  await folders.sessionDir('s2');
  await folders.sessionDir('s0');
  expect(await readdir(first)).toEqual([]);
});

it("a temp file of this process's write in flight is not a dead writer's", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'archive-folders-'));
  dirs.push(dir);
  const temp = join(dir, `summary-002-abc.json.${process.pid}.0123456789ab.tmp`);
  await writeFile(temp, '{');
  tempsInFlight.add(temp);
  try {
    await removeStaleTemps(dir);
    expect(await readdir(dir)).toHaveLength(1);
  } finally {
    tempsInFlight.delete(temp);
  }
  await removeStaleTemps(dir);
  expect(await readdir(dir)).toEqual([]);
});
