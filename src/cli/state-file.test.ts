/**
 * `--state FILE` on a full disk: the write failed with a bare `ENOSPC` (no flag named) and left
 * its temporary file behind (a full disk kept fuller, one more file per run); the file was
 * also written 0644 while it holds the summary, which the archive writes 0600. The fault is
 * injected where the file system answers (`rename`), as a full disk fails it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isCompactError } from '../core/errors.js';
import { MemorySessionStore } from '../core/session/session-store.js';

const fault = vi.hoisted(() => ({ rename: false }));
vi.mock('node:fs/promises', async (original) => {
  const fs = await original<typeof import('node:fs/promises')>();
  return {
    ...fs,
    rename: async (from: string, to: string) => {
      if (!fault.rename) return fs.rename(from, to);
      throw Object.assign(new Error('ENOSPC: no space left on device, rename'), { code: 'ENOSPC' });
    },
  };
});
const { loadStateFile, saveStateFile } = await import('./state-file.js');

const dirs: string[] = [];
afterEach(async () => {
  fault.rename = false;
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function storeWithState(): Promise<MemorySessionStore> {
  const store = new MemorySessionStore();
  await store.set('cli', { sessionId: 'cli', version: 2, coveredIds: ['a'], updatedAt: 1 });
  return store;
}

describe('saveStateFile', () => {
  it('on a full disk: a typed error naming --state, and no temporary file left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'state-file-'));
    dirs.push(dir);
    fault.rename = true;
    const error = await saveStateFile(join(dir, 'state.json'), await storeWithState(), 'cli').catch((e) => e);
    expect(isCompactError(error, 'invalid_config')).toBe(true);
    expect((error as Error).message).toMatch(/--state .*state\.json.*ENOSPC/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes the state only its owner reads (0600), as the archive', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'state-file-'));
    dirs.push(dir);
    await saveStateFile(join(dir, 'state.json'), await storeWithState(), 'cli');
    expect(await readdir(dir)).toEqual(['state.json']);
    expect((await stat(join(dir, 'state.json'))).mode & 0o777).toBe(0o600);
  });
});

describe('loadStateFile', () => {
  /** The id of a process that has ended (a run killed with -9 mid-write leaves its temp file). */
  async function endedPid(): Promise<number> {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('exit', resolve));
    return child.pid as number;
  }

  it("removes the temp files of --state FILE a run killed mid-write left (a later run's start), no other", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'state-file-'));
    dirs.push(dir);
    const gone = await endedPid();
    const names = {
      stale: `state.json.${gone}.0123456789ab.tmp`,
      live: `state.json.${process.ppid}.0123456789ab.tmp`,
      otherFile: `other.json.${gone}.0123456789ab.tmp`,
    };
    for (const name of Object.values(names)) await writeFile(join(dir, name), '{"sessionId":"cli"');
    await saveStateFile(join(dir, 'state.json'), await storeWithState(), 'cli');
    const store = await loadStateFile(join(dir, 'state.json'), 'cli');
    expect((await store.get('cli'))?.version).toBe(2);
    expect((await readdir(dir)).sort()).toEqual([names.live, names.otherFile, 'state.json'].sort());
  });
});
