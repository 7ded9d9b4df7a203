import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';

/** Issue 23, finding 6: archive folders are created 0700 (files were already 0600). */
describe.skipIf(process.platform === 'win32')('fs archive modes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'archive-modes-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the root and session folders are 0700, files 0600', async () => {
    const root = join(dir, 'archive');
    const storage = fsStorage({ path: root });
    const location = await storage.saveTranscript('session-a', [{ role: 'user', content: 'hi' }], 1);
    expect((await stat(root)).mode & 0o777).toBe(0o700);
    expect((await stat(join(root, 'session-a'))).mode & 0o777).toBe(0o700);
    expect((await stat(location)).mode & 0o777).toBe(0o600);
  });
});
