/**
 * Issue 36, point 5 (files): the fs archive refuses a root or session folder it does not own or
 * that others can write, never follows a link planted inside it, writes every file 0600 in 0700
 * folders (an existing wider events file is tightened), and a refused archive costs the
 * conversation nothing (a `compact.error`, the compaction goes on). The report page (`report
 * --out`, `compact --report`) is written 0600 and never through a link.
 */
import {
  chmod,
  chown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArchivedSummary } from '../../src/core/archive/storage-adapter.js';
import { isCompactError } from '../../src/core/errors.js';
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { sampleArtifact } from '../../src/testing/sample-artifact.js';
import { sampleCompactionEvents } from '../../src/testing/sample-events.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { cli } from '../support/cli-fixtures.js';

let dir: string;
let count = 0;
/** A fresh folder (0700, from mkdtemp) for one case. */
const fresh = async () => {
  const path = join(dir, `case-${count++}`);
  await mkdir(path, { mode: 0o700 });
  return path;
};
const mode = async (path: string) => (await stat(path)).mode & 0o777;
const transcript = [{ role: 'user', content: 'hi' }];

/** The error a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'archive-files-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(process.platform === 'win32')('the fs archive owns its folders', () => {
  it('refuses an existing root that is world- or group-writable, with a typed error naming the fix', async () => {
    for (const wide of [0o777, 0o770, 0o1777]) {
      const root = await fresh();
      await chmod(root, wide);
      const error = await rejection(fsStorage({ path: root }).saveTranscript('s', transcript, 1));
      expect(isCompactError(error, 'storage_failed')).toBe(true);
      expect((error as Error).message).toContain(
        `archive root ${root} has mode 0${(wide & 0o777).toString(8)}`,
      );
      expect((error as Error).message).toContain('chmod 700');
      // Nothing was written, and the mode was left as the user set it.
      expect(await readdirSafe(root)).toEqual([]);
    }
  });

  it('refuses a root or session folder owned by another user', async () => {
    const uid = process.getuid?.();
    // As root, a folder given away; as another user, a system folder root owns.
    let root = '/usr';
    if (uid === 0) {
      root = await fresh();
      await chown(root, 4242, 4242);
    }
    const error = await rejection(fsStorage({ path: root }).saveTranscript('s', transcript, 1));
    expect(isCompactError(error, 'storage_failed')).toBe(true);
    expect((error as Error).message).toMatch(/owned by uid \d+, not by this process's user/);
    if (uid === 0) {
      const mine = await fresh();
      await mkdir(join(mine, 's'), { mode: 0o700 });
      await chown(join(mine, 's'), 4242, 4242);
      const inner = await rejection(fsStorage({ path: mine }).saveTranscript('s', transcript, 1));
      expect((inner as Error).message).toContain(`session folder ${join(mine, 's')} is owned by uid 4242`);
    }
  });

  it('refuses a group-writable session folder', async () => {
    const root = await fresh();
    await mkdir(join(root, 's'), { mode: 0o700 });
    await chmod(join(root, 's'), 0o770);
    const error = await rejection(fsStorage({ path: root }).saveSummary('s', summaryOf('s'), 1));
    expect((error as Error).message).toContain(`session folder ${join(root, 's')} has mode 0770`);
  });

  it('never follows a link planted as the session folder or its artifacts folder', async () => {
    const root = await fresh();
    const elsewhere = await fresh();
    await symlink(elsewhere, join(root, 's'));
    const error = await rejection(fsStorage({ path: root }).saveTranscript('s', transcript, 1));
    expect((error as Error).message).toContain(`session folder ${join(root, 's')} is a symbolic link`);
    const other = await fresh();
    await mkdir(join(root, 't'), { mode: 0o700 });
    await symlink(other, join(root, 't', 'artifacts'));
    const storage = fsStorage({ path: root });
    const artifact = rejection(storage.saveArtifact!('t', sampleArtifact('t', 'tool-a1', 'secret text')));
    expect(((await artifact) as Error).message).toContain('is a symbolic link');
    await expect(storage.listArtifacts!('t')).rejects.toThrow(/symbolic link/);
    expect(await readdirSafe(elsewhere)).toEqual([]);
    expect(await readdirSafe(other)).toEqual([]);
  });

  it('never appends events through a link planted as events.jsonl', async () => {
    const root = await fresh();
    const target = join(await fresh(), 'victim.txt');
    await writeFile(target, 'untouched\n');
    await mkdir(join(root, 's'), { mode: 0o700 });
    await symlink(target, join(root, 's', 'events.jsonl'));
    const [event] = sampleCompactionEvents({ sessionId: 's' });
    const error = await rejection(fsStorage({ path: root }).saveEvent('s', event as AnyCompactEvent));
    expect(isCompactError(error, 'storage_failed')).toBe(true);
    expect((error as Error).message).toContain('is a symbolic link; it is not followed');
    expect(await readFile(target, 'utf8')).toBe('untouched\n');
  });

  it('never writes a transcript through a link planted at a name it could take', async () => {
    const root = await fresh();
    const target = join(await fresh(), 'victim.txt');
    await writeFile(target, 'untouched\n');
    await mkdir(join(root, 's'), { mode: 0o700 });
    const name = join(root, 's', 'transcript-pre-compact-001.jsonl');
    await symlink(target, name);
    const written = await fsStorage({ path: root }).saveTranscript('s', transcript, 1);
    expect(await readFile(target, 'utf8')).toBe('untouched\n');
    // Every write takes a new name (issue 34): the planted link is neither followed nor replaced.
    expect(written).not.toBe(name);
    expect((await lstat(written)).isFile()).toBe(true);
    expect(await mode(written)).toBe(0o600);
    expect((await lstat(name)).isSymbolicLink()).toBe(true);
  });

  it('writes every file 0600 in 0700 folders, and tightens an events file left wider', async () => {
    const root = join(await fresh(), 'deep', 'archive');
    const storage = fsStorage({ path: root });
    await mkdir(join(root, 's'), { recursive: true, mode: 0o700 });
    await writeFile(join(root, 's', 'events.jsonl'), '', { mode: 0o644 });
    await chmod(join(root, 's', 'events.jsonl'), 0o644);
    const files = [
      await storage.saveTranscript('s', transcript, 1),
      await storage.saveSummary('s', summaryOf('s'), 1),
      await storage.saveArtifact!('s', sampleArtifact('s', 'tool-a1', 'text')),
    ];
    await storage.saveEvent('s', sampleCompactionEvents({ sessionId: 's' })[0] as AnyCompactEvent);
    for (const file of [...files, join(root, 's', 'events.jsonl')]) expect(await mode(file)).toBe(0o600);
    for (const folder of [join(root, '..'), root, join(root, 's'), join(root, 's', 'artifacts')])
      expect(await mode(folder)).toBe(0o700);
  });

  it('a refused archive costs the conversation nothing: the compaction goes on with a compact.error', async () => {
    const root = await fresh();
    await chmod(root, 0o777);
    const errors: string[] = [];
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 4_000,
      storage: fsStorage({ path: root }),
    });
    manager.on('compact.error', (event) =>
      errors.push(`${event.properties.errorType}: ${event.properties.message}`),
    );
    const result = await manager.compact('s', syntheticSession({ turns: 20, seed: 2 }));
    await manager.shutdown();
    expect(result.applied).toBe(true);
    expect(errors.some((line) => line.startsWith('storage_failed') && line.includes('has mode 0777'))).toBe(
      true,
    );
    expect(await readdirSafe(root)).toEqual([]);
  });
});

describe.skipIf(process.platform === 'win32')('the report page', () => {
  it('is written 0600 and never through a link at --out', async () => {
    const folder = await fresh();
    const trace = join(folder, 'trace.jsonl');
    await writeFile(
      trace,
      `${sampleCompactionEvents({ sessionId: 's' })
        .map((e) => JSON.stringify(e))
        .join('\n')}\n`,
    );
    const page = join(folder, 'report.html');
    const written = await cli(['report', trace, '--out', page]);
    expect(written.code).toBe(0);
    expect(await mode(page)).toBe(0o600);

    const victim = join(await fresh(), 'victim.txt');
    await writeFile(victim, 'untouched\n');
    const link = join(folder, 'linked.html');
    await symlink(victim, link);
    const refused = await cli(['report', trace, '--out', link]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('is a symbolic link; it is not followed');
    expect(await readFile(victim, 'utf8')).toBe('untouched\n');
    expect(await readlink(link)).toBe(victim);
  });

  it('compact --report is written 0600 and never through a link', async () => {
    const folder = await fresh();
    const input = join(folder, 'in.json');
    await writeFile(input, JSON.stringify(syntheticSession({ turns: 12, seed: 4 })));
    const report = join(folder, 'report.json');
    const run = await cli(['compact', input, '--max-context', '3000', '--report', report]);
    expect(run.code).toBe(0);
    expect(await mode(report)).toBe(0o600);
    const victim = join(await fresh(), 'victim.txt');
    await writeFile(victim, 'untouched\n');
    await symlink(victim, join(folder, 'linked.json'));
    const refused = await cli([
      'compact',
      input,
      '--max-context',
      '3000',
      '--report',
      join(folder, 'linked.json'),
    ]);
    expect(refused.code).toBe(2);
    expect(await readFile(victim, 'utf8')).toBe('untouched\n');
  });
});

function summaryOf(sessionId: string): ArchivedSummary {
  const text = 'summary';
  return {
    sessionId,
    step: 1,
    text,
    tokens: 1,
    summarizer: 'embedded',
    strategy: 'task_state',
    coveredIds: [],
    createdAt: 1,
  };
}

const readdirSafe = (path: string) => readdir(path);
