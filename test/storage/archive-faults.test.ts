/**
 * The fs archive under faults: state loss never overwrites an earlier original, a summary
 * names its archive ref only when the write succeeded, errors name the real cause (ENOTDIR,
 * EROFS, ENOSPC), and `requireArchive` blocks pruning while the archive cannot be written.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { readSessionStatus } from '../../src/cli/status/status-command.js';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { jsonlExporter } from '../../src/exporters/jsonl/jsonl-exporter.js';
import { fsStorage } from '../../src/storage/fs/index.js';
import { sampleCompactionEvents } from '../../src/testing/sample-events.js';
import { charCounter, toolTurns } from '../support/manager-fixtures.js';
import { filesUnder } from '../support/temp-dirs.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'compact-archive-faults-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

function manager(path: string, extra: Record<string, unknown> = {}) {
  return new CompactManager({
    maxContextTokens: 6_000,
    tokenCounter: charCounter,
    storage: fsStorage({ path }),
    policy: { keepRecentTurns: 2, keepToolIoPairs: 1, hardCapBuffer: 300 },
    ...extra,
  });
}

async function drive(target: CompactManager, seed: string, from: number, to: number) {
  const results = [];
  for (let turns = from; turns <= to; turns++) {
    const result = await target.compact('s', toolTurns(turns, seed));
    expect(result.tokensAfter).toBeLessThanOrEqual(target.budget);
    results.push(result);
  }
  await target.flush();
  return results;
}

describe('archive under faults', () => {
  it('state loss followed by more compactions overwrites no archive file', async () => {
    const root = await tempDir();
    const first = manager(root);
    const before = await drive(first, 'first', 10, 40);
    expect(before.at(-1)!.version).toBeGreaterThan(1);
    await first.shutdown();
    const earlier = await filesUnder(root);
    expect([...earlier.keys()].some((path) => path.includes('sum-v1'))).toBe(true);

    // A new process with an empty store: its versions resume above the archived ones.
    const second = manager(root);
    const after = await drive(second, 'second', 10, 40);
    expect(after.find((r) => r.summary && !r.summary.local)!.version).toBeGreaterThan(before.at(-1)!.version);
    await second.shutdown();
    const now = await filesUnder(root);
    // Append-only (issue 34): every earlier file is still there, under its name, unchanged.
    for (const [path, content] of earlier) {
      if (path.endsWith('events.jsonl')) expect(now.get(path)!.startsWith(content)).toBe(true);
      else expect(now.get(path), `${path} kept as it was`).toBe(content);
    }
    expect([...now.keys()].some((path) => path.endsWith('.prev'))).toBe(false);
    expect([...now.keys()].filter((path) => /sum-v1\./.test(path))).toHaveLength(1);
    // A reference saved again (an archive without summary versions, another process) is a new
    // file beside the first, and reads return the newest write.
    const archive = fsStorage({ path: root });
    const original = (await archive.loadArtifact!('s', 'sum-v1'))!;
    await archive.saveArtifact!('s', { ...original, text: 'second original' });
    expect((await archive.loadArtifact!('s', 'sum-v1'))?.text).toBe('second original');
    expect([...(await filesUnder(root)).keys()].filter((path) => /sum-v1\./.test(path))).toHaveLength(2);
    for (const [path, content] of now)
      if (!path.endsWith('events.jsonl')) expect(await readFile(path, 'utf8')).toBe(content);
  });

  it('an archive folder under a regular file: no call fails, the error names ENOTDIR, no summary claims a ref', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'file'), 'not a folder');
    const target = manager(join(root, 'file', 'archive'));
    const errors: string[] = [];
    target.on('compact.error', (event) => errors.push(String(event.properties.message)));
    const results = await drive(target, 'x', 10, 40);
    const summaries = results.filter((r) => r.summary).map((r) => r.summary!.text);
    expect(summaries.length).toBeGreaterThan(0);
    for (const text of summaries) expect(text).not.toContain('Archived originals');
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.some((message) => /ENOTDIR/.test(message))).toBe(true);
    expect(errors.some((message) => /ENOENT/.test(message) && !/ENOTDIR/.test(message))).toBe(false);
  });

  it('a failing archive is reported once when it starts failing and once when it recovers, nothing on stderr', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'file'), 'not a folder');
    const target = manager(join(root, 'file', 'archive'));
    const events: { name: string; properties: Record<string, unknown> }[] = [];
    target.on('compact.error', (event) => events.push(event));
    target.on('compact.warning', (event) => events.push(event));
    const stderr = vi.spyOn(process.stderr, 'write');
    try {
      const failing = await drive(target, 'x', 10, 40);
      expect(failing.filter((r) => r.applied).length).toBeGreaterThan(1);
      expect(events.map((e) => e.properties.errorType ?? e.properties.code)).toEqual(['storage_failed']);
      expect(String(events[0]!.properties.message)).toMatch(/ENOTDIR/);

      // The archive can be written again: one recovery, with the calls the failure affected.
      await rm(join(root, 'file'));
      await drive(target, 'x', 41, 60);
      expect(events.map((e) => e.properties.errorType ?? e.properties.code)).toEqual([
        'storage_failed',
        'storage_recovered',
      ]);
      const affected = (events[1]!.properties.context as { affectedCalls: number }).affectedCalls;
      expect(affected).toBeGreaterThan(1);
      expect(stderr).not.toHaveBeenCalled();
    } finally {
      stderr.mockRestore();
    }
  });

  it('a placeholder names its recall ref only when its original was written, in this call and later ones', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'file'), 'not a folder');
    const target = manager(join(root, 'file', 'archive'), { maxContextTokens: 30_000 });
    const sent: string[] = [];
    for (let turns = 10; turns <= 24; turns++) {
      const result = await target.compact('s', toolTurns(turns, 'x', 3_000));
      expect(result.tokensAfter).toBeLessThanOrEqual(target.budget);
      sent.push(JSON.stringify(result.messages));
    }
    expect(sent.some((text) => text.includes('[cleared: read output'))).toBe(true);
    for (const text of sent) expect(text).not.toMatch(/recall (ref )?\\"/);

    // The same session with a working archive names refs, and each one was written.
    const good = await tempDir();
    const working = manager(good, { maxContextTokens: 30_000 });
    const named = new Set<string>();
    for (let turns = 10; turns <= 24; turns++) {
      const text = JSON.stringify((await working.compact('s', toolTurns(turns, 'x', 3_000))).messages);
      for (const [, ref] of text.matchAll(/recall \\"(tool-[0-9a-z]+)/g)) named.add(ref!);
    }
    await working.flush();
    const files = [...(await filesUnder(good)).keys()];
    expect(named.size).toBeGreaterThan(0);
    for (const ref of named)
      expect(
        files.some((path) => path.includes(ref)),
        ref,
      ).toBe(true);
  });

  it('requireArchive blocks pruning while the archive cannot be written, naming the cause', async () => {
    const root = await tempDir();
    await writeFile(join(root, 'file'), 'not a folder');
    const target = manager(join(root, 'file', 'archive'), { requireArchive: true });
    const error = await drive(target, 'x', 10, 40).catch((e: unknown) => e);
    expect(isCompactError(error, 'storage_failed')).toBe(true);
    expect(String((error as Error).message)).toMatch(/ENOTDIR.*nothing was pruned/);
    expect(await target.state('s')).toBeUndefined();
  });

  // tmpfs mounts need root and a kernel that allows them (containers often do not). Where
  // they cannot be made the test is reported skipped (`skip`), never counted as passing.
  const mountTmpfs = async (options: string, skip: (note: string) => never): Promise<string> => {
    const dir = await tempDir();
    const mountPoint = join(dir, 'mnt');
    await mkdir(mountPoint);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', mountPoint], { stdio: 'ignore' });
      return mountPoint;
    } catch {
      return skip(`cannot mount a tmpfs (${options})`);
    }
  };
  const unmount = (mountPoint: string) => execFileSync('umount', [mountPoint], { stdio: 'ignore' });

  it('a read-only file system is reported as EROFS', async ({ skip }) => {
    const mountPoint = await mountTmpfs('ro,size=1m', skip);
    try {
      const target = manager(join(mountPoint, 'archive'));
      const errors: string[] = [];
      target.on('compact.error', (event) => errors.push(String(event.properties.message)));
      const results = await drive(target, 'x', 10, 30);
      expect(results.some((r) => r.applied)).toBe(true);
      expect(errors.some((message) => /EROFS/.test(message))).toBe(true);
      for (const r of results) expect(r.summary?.text ?? '').not.toContain('Archived originals');
    } finally {
      unmount(mountPoint);
    }
  });

  it('a full file system is reported as ENOSPC and no summary claims a ref it could not write', async ({
    skip,
  }) => {
    const mountPoint = await mountTmpfs('size=32k', skip);
    try {
      await writeFile(join(mountPoint, 'filler'), Buffer.alloc(28 * 1024)).catch(() => {});
      const target = manager(join(mountPoint, 'archive'));
      const errors: string[] = [];
      target.on('compact.error', (event) => errors.push(String(event.properties.message)));
      const results = await drive(target, 'x', 10, 30);
      expect(results.some((r) => r.applied)).toBe(true);
      expect(errors.some((message) => /ENOSPC/.test(message))).toBe(true);
      const files = await filesUnder(join(mountPoint, 'archive')).catch(() => new Map<string, string>());
      for (const r of results) {
        const ref = r.summary?.text.match(/recall ref "(sum-v\d+)"/)?.[1];
        if (ref) expect([...files.keys()].some((path) => path.endsWith(`${ref}.json`))).toBe(true);
        // Every placeholder ref in what is sent was written.
        for (const [, named] of JSON.stringify(r.messages).matchAll(
          /recall \\"((?:tool|args|cut)-[0-9a-z]+)/g,
        ))
          expect(
            [...files.keys()].some((path) => path.includes(named!)),
            named,
          ).toBe(true);
      }
    } finally {
      unmount(mountPoint);
    }
  });

  it('a full disk leaves no torn line in events.jsonl: once space is back, status reads the session', async ({
    skip,
  }) => {
    const mountPoint = await mountTmpfs('size=64k', skip);
    try {
      const root = join(mountPoint, 'archive');
      const storage = fsStorage({ path: root });
      const [first, second, third] = sampleCompactionEvents({ sessionId: 'full', summary: 'short' });
      await storage.saveEvent!('full', first!);
      // The disk fills up, with room left only in the last page of events.jsonl: the next
      // line (larger than that room) is written in part.
      await writeFile(join(mountPoint, 'filler'), Buffer.alloc(1024 * 1024)).catch(() => {});
      const large = { ...second!, properties: { ...second!.properties, note: 'n'.repeat(12_000) } };
      const failed = await storage.saveEvent!('full', large as typeof second & {}).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isCompactError(failed, 'storage_failed')).toBe(true);
      await rm(join(mountPoint, 'filler'));
      await storage.saveEvent!('full', third!);
      await storage.close?.();

      const folder = join(root, 'full');
      const text = await readFile(join(folder, 'events.jsonl'), 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      const lines = text.trimEnd().split('\n');
      expect(lines.map((line) => (JSON.parse(line) as { spanId: string }).spanId)).toEqual([
        first!.spanId,
        third!.spanId,
      ]);
      await expect(readSessionStatus(folder)).resolves.toMatchObject({ folder });
    } finally {
      unmount(mountPoint);
    }
  });

  it('a full disk leaves no torn line in a JSONL trace file either', async ({ skip }) => {
    const mountPoint = await mountTmpfs('size=64k', skip);
    try {
      const path = join(mountPoint, 'trace.jsonl');
      const exporter = jsonlExporter({ path });
      const [first, second, third] = sampleCompactionEvents({ sessionId: 'trace', summary: 'short' });
      await exporter.export([first!]);
      await writeFile(join(mountPoint, 'filler'), Buffer.alloc(1024 * 1024)).catch(() => {});
      const large = { ...second!, properties: { ...second!.properties, note: 'n'.repeat(12_000) } };
      // The exporter reports the failure its own way (never to the caller): the file is what counts.
      await Promise.resolve(exporter.export([large as typeof second & {}])).catch(() => {});
      await rm(join(mountPoint, 'filler'));
      await exporter.export([third!]);
      const text = await readFile(path, 'utf8');
      expect(text.endsWith('\n')).toBe(true);
      expect(
        text
          .trimEnd()
          .split('\n')
          .map((line) => (JSON.parse(line) as { spanId: string }).spanId),
      ).toEqual([first!.spanId, third!.spanId]);
    } finally {
      unmount(mountPoint);
    }
  });
});
