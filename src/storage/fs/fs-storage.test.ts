import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ArchivedSummary } from '../../core/archive/storage-adapter.js';
import { isCompactError } from '../../core/errors.js';
import { hashSessionId } from '../../core/session/hash-session-id.js';
import { describeArtifactConformance } from '../../testing/artifact-conformance.js';
import { sampleArtifact } from '../../testing/sample-artifact.js';
import { sampleCompactionEvents } from '../../testing/sample-events.js';
import { describeStorageConformance } from '../../testing/storage-conformance.js';
import { safeSessionSegment } from '../session-path.js';
import { fsStorage } from './fs-storage.js';

const sampleSummary: ArchivedSummary = {
  sessionId: 'session-abc-123',
  step: 1,
  text: 's',
  tokens: 1,
  strategy: 'brief',
  summarizer: 'embedded',
  coveredIds: [],
  createdAt: 0,
};

async function tempRoot(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'compact-fs-'));
}

describeStorageConformance({
  name: 'fs',
  async create() {
    const root = await tempRoot();
    const adapter = fsStorage({ path: root });
    return {
      adapter,
      read: (location) => readFile(location, 'utf8'),
      async readEvents(sessionId) {
        const text = await readFile(join(root, safeSessionSegment(sessionId), 'events.jsonl'), 'utf8');
        return text
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line));
      },
      isInsideRoot(location) {
        const rel = relative(root, resolve(location));
        return rel !== '' && !rel.startsWith('..') && !rel.includes('/..') && rel.split(/[/\\]/).length === 2;
      },
      close: () => rm(root, { recursive: true, force: true }),
    };
  },
});

describeArtifactConformance({
  name: 'fs',
  async create() {
    const root = await tempRoot();
    return {
      adapter: fsStorage({ path: root }),
      isInsideRoot(location) {
        const parts = relative(root, resolve(location)).split(/[/\\]/);
        return parts.length === 3 && parts[1] === 'artifacts' && parts.every((p) => p !== '' && p !== '..');
      },
      close: () => rm(root, { recursive: true, force: true }),
    };
  },
});

describe('fsStorage artifacts', () => {
  it('never returns a file copied or symlinked in from another session, nor a non-artifact or broken file', async () => {
    const root = await tempRoot();
    try {
      const adapter = fsStorage({ path: root });
      await adapter.saveArtifact!('bob', sampleArtifact('bob', 'tool-bob1', 'bob secret'));
      await adapter.saveArtifact!('alice', sampleArtifact('alice', 'tool-mine', 'alice text'));
      const aliceDir = join(root, safeSessionSegment('alice'), 'artifacts');
      const bobDir = join(root, safeSessionSegment('bob'), 'artifacts');
      const bobFile = join(bobDir, (await readdir(bobDir))[0]!);
      await writeFile(join(aliceDir, 'tool-copied.json'), await readFile(bobFile, 'utf8'));
      await symlink(bobFile, join(aliceDir, 'tool-bob1.json'));
      await writeFile(join(aliceDir, 'notes.txt'), 'not an artifact');
      await writeFile(join(aliceDir, 'tool-broken.json'), '{ not json');
      expect(await adapter.loadArtifact!('alice', 'tool-copied')).toBeUndefined();
      expect(await adapter.loadArtifact!('alice', 'tool-bob1')).toBeUndefined();
      // A broken file under the ref is no missing one: read by its ref, it says so.
      await expect(adapter.loadArtifact!('alice', 'tool-broken')).rejects.toMatchObject({
        code: 'corrupt_state',
        message: expect.stringContaining('"tool-broken"'),
      });
      expect((await adapter.listArtifacts!('alice')).map((a) => a.text)).toEqual(['alice text']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('creates no directory when reading a session that has none', async () => {
    const root = await tempRoot();
    try {
      const adapter = fsStorage({ path: root });
      expect(await adapter.listArtifacts!('ghost')).toEqual([]);
      expect(await adapter.loadArtifact!('ghost', 'tool-x')).toBeUndefined();
      expect(await readdir(root)).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('fsStorage', () => {
  it('lays the archive out as the spec says and leaves no temp files', async () => {
    const root = await tempRoot();
    try {
      const adapter = fsStorage({ path: join(root, '.compact/archive') });
      await adapter.saveTranscript('session-abc-123', [{ role: 'user', content: 'hi' }], 1);
      await adapter.saveSummary('session-abc-123', sampleSummary, 1);
      await adapter.saveTranscript('session-abc-123', [], 2);
      for (const event of sampleCompactionEvents()) await adapter.saveEvent('session-abc-123', event);
      await adapter.close?.();
      const files = (await readdir(join(root, '.compact/archive/session-abc-123'))).sort();
      expect(files).toHaveLength(4);
      expect(files[0]).toBe('events.jsonl');
      expect(files[1]).toMatch(/^summary-001-[0-9a-z]{9}-[0-9a-f]{8}\.json$/);
      expect(files[2]).toMatch(/^transcript-pre-compact-001-[0-9a-z]{9}-[0-9a-f]{8}\.jsonl$/);
      // The second history does not extend the first (it is empty): written whole.
      expect(files[3]).toMatch(/^transcript-pre-compact-002-[0-9a-z]{9}-[0-9a-f]{8}\.jsonl$/);
      const lines = (
        await readFile(join(root, '.compact/archive/session-abc-123/events.jsonl'), 'utf8')
      ).split('\n');
      expect(lines.at(-1)).toBe('');
      expect(lines).toHaveLength(sampleCompactionEvents().length + 1);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('names session folders by the keyed hash with hashSessionIds, and reads them back', async () => {
    const root = await tempRoot();
    try {
      const adapter = fsStorage({ path: root, hashSessionIds: true, hashKey: 'secret-key' });
      const id = 'alice@example.com';
      const location = await adapter.saveTranscript(id, [{ role: 'user', content: 'hi' }], 1);
      const hashed = hashSessionId(id, 'secret-key');
      expect(await readdir(root)).toEqual([hashed]);
      expect(location).toContain(hashed);
      expect(location).not.toContain('alice');
      await adapter.saveArtifact?.(id, sampleArtifact(id, 'call-1', 'original output'));
      expect((await adapter.loadArtifact?.(id, 'call-1'))?.text).toBe('original output');
      // Another key is another folder: nothing of the first is found.
      const other = fsStorage({ path: root, hashSessionIds: true, hashKey: 'other-key' });
      expect(await other.loadArtifact?.(id, 'call-1')).toBeUndefined();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('defaults to .compact/archive under the working directory', async () => {
    const root = await tempRoot();
    const cwd = process.cwd();
    try {
      process.chdir(root);
      const location = await fsStorage().saveTranscript('s', [], 3);
      const folder = join(
        await import('node:fs/promises').then((fs) => fs.realpath(root)),
        '.compact/archive/s',
      );
      expect(location.startsWith(`${folder}/transcript-pre-compact-003-`)).toBe(true);
    } finally {
      process.chdir(cwd);
      await rm(root, { recursive: true, force: true });
    }
  });

  it('recreates a session directory removed between writes', async () => {
    const root = await tempRoot();
    try {
      const adapter = fsStorage({ path: root });
      await adapter.saveTranscript('s', [], 1);
      await rm(join(root, 's'), { recursive: true });
      await adapter.saveEvent('s', sampleCompactionEvents()[0]!);
      await rm(join(root, 's'), { recursive: true });
      await adapter.saveTranscript('s', [{ a: 1 }], 2);
      expect(await readdir(join(root, 's'))).toEqual([
        expect.stringMatching(/^transcript-pre-compact-002-.*\.jsonl$/),
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('raises storage_failed when it cannot write', async () => {
    const root = await tempRoot();
    try {
      const blocker = join(root, 'file');
      await writeFile(blocker, 'not a directory');
      const adapter = fsStorage({ path: blocker });
      await expect(adapter.saveTranscript('s', [], 1)).rejects.toThrow();
      const ok = fsStorage({ path: root });
      await ok.saveTranscript('s', [], 1);
      await rm(join(root, 's'), { recursive: true });
      await writeFile(join(root, 's'), 'now a file');
      const error = await ok
        .saveSummary('s', { sessionId: 's' } as never, 1)
        .catch((caught: unknown) => caught);
      expect(isCompactError(error, 'storage_failed')).toBe(true);
      const appendError = await ok
        .saveEvent('s', sampleCompactionEvents()[0]!)
        .catch((caught: unknown) => caught);
      expect(isCompactError(appendError, 'storage_failed')).toBe(true);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('fsStorage write signals', () => {
  it('a write whose signal is aborted in flight puts no file in place and appends no line', async () => {
    const root = await tempRoot();
    try {
      const adapter = fsStorage({ path: root });
      // One write of each kind lands first (the session folder and events.jsonl exist).
      const events = sampleCompactionEvents({ sessionId: 's' });
      await adapter.saveTranscript('s', [{ role: 'user', content: 'kept' }], 1);
      await adapter.saveEvent('s', events[0]!);
      await adapter.saveArtifact!('s', sampleArtifact('s', 'tool-kept', 'kept'));
      const before = (await readdir(join(root, 's'), { recursive: true })).sort();
      const eventsBefore = await readFile(join(root, 's', 'events.jsonl'), 'utf8');
      const given = new Error('given up');
      const summary: ArchivedSummary = { ...sampleSummary, sessionId: 's', step: 2 };
      const writes = [
        (signal: AbortSignal) =>
          adapter.saveTranscript('s', [{ role: 'user', content: 'late' }], 2, { signal }),
        (signal: AbortSignal) => adapter.saveSummary('s', summary, 2, { signal }),
        (signal: AbortSignal) =>
          adapter.saveArtifact!('s', sampleArtifact('s', 'tool-late', 'late'), { signal }),
        (signal: AbortSignal) => adapter.saveEvent('s', events[1]!, { signal }),
      ];
      for (const write of writes) {
        const controller = new AbortController();
        const pending = write(controller.signal);
        controller.abort(given);
        const error = await pending.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isCompactError(error, 'storage_failed')).toBe(true);
        expect(String((error as Error).message)).toMatch(/the write was aborted \(given up\)/);
      }
      await adapter.close?.();
      expect((await readdir(join(root, 's'), { recursive: true })).sort()).toEqual(before);
      expect(await readFile(join(root, 's', 'events.jsonl'), 'utf8')).toBe(eventsBefore);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('safeSessionSegment', () => {
  it('keeps plain ids and encodes the rest reversibly', () => {
    expect(safeSessionSegment('session-abc_123.v2')).toBe('session-abc_123.v2');
    expect(safeSessionSegment('../etc/passwd')).toBe('%2E.%2Fetc%2Fpasswd');
    expect(safeSessionSegment('a\u0000b')).toBe('a%00b');
    expect(safeSessionSegment('')).toBe('~empty');
    expect(decodeURIComponent(safeSessionSegment('a b/ü%'))).toBe('a b/ü%');
  });

  it('adds a hash for upper case and long ids', () => {
    expect(safeSessionSegment('Case')).toMatch(/^Case~[0-9a-f]{16}$/);
    expect(safeSessionSegment('Case').toLowerCase()).not.toBe(safeSessionSegment('case'));
    const long = safeSessionSegment('x'.repeat(500));
    expect(long).toHaveLength(100 + 17);
    expect(long).not.toBe(safeSessionSegment(`${'x'.repeat(499)}y`));
  });
});
