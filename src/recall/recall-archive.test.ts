import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ArchivedArtifact, StorageAdapter } from '../core/archive/storage-adapter.js';
import { fsStorage } from '../storage/fs/fs-storage.js';
import { memoryStorage } from '../storage/memory/memory-storage.js';
import { FORGED_REFS, sampleArtifact } from '../testing/sample-artifact.js';
import { RecallArchive } from './recall-archive.js';
import { isRecallError } from './recall-error.js';
import { runRecallTool } from './recall-tool.js';

/** A memory storage that counts artifact listings (to see when an index is built). */
function countingStorage() {
  const inner = memoryStorage();
  const counts = { list: 0 };
  const storage: StorageAdapter = {
    ...inner,
    name: inner.name,
    saveArtifact: inner.saveArtifact,
    loadArtifact: inner.loadArtifact,
    listArtifacts: async (sessionId) => {
      counts.list++;
      return inner.listArtifacts(sessionId);
    },
  };
  return { storage, inner, counts };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return isRecallError(error) ? error.code : `not a RecallError: ${String(error)}`;
}

describe('RecallArchive.read', () => {
  it('returns the archived text in pages that join back to the original', async () => {
    const recall = new RecallArchive(memoryStorage(), { pageChars: 1000 });
    const text = Array.from({ length: 300 }, (_, i) => `line ${i} 😀 ünïcode`).join('\n');
    await recall.storage.saveArtifact!('s', sampleArtifact('s', 'tool-long1', text));
    const first = await recall.read('s', 'tool-long1');
    expect(first.pages).toBe(Math.ceil(text.length / 1000));
    let joined = first.text;
    for (let page = 2; page <= first.pages; page++)
      joined += (await recall.read('s', 'tool-long1', page)).text;
    expect(joined).toBe(text);
    // No page starts or ends inside a surrogate pair.
    for (let page = 1; page <= first.pages; page++) {
      const { text: slice } = await recall.read('s', 'tool-long1', page);
      expect(slice.charCodeAt(0) >= 0xdc00 && slice.charCodeAt(0) <= 0xdfff).toBe(false);
      expect(/[\ud800-\udbff]$/.test(slice)).toBe(false);
    }
  });

  it('refuses oversized pages, pages past the end and malformed page numbers', async () => {
    const recall = new RecallArchive(memoryStorage(), { pageChars: 1000, maxPageChars: 5000 });
    await recall.storage.saveArtifact!('s', sampleArtifact('s', 'tool-a', 'x'.repeat(2500)));
    expect(await codeOf(recall.read('s', 'tool-a', 1, 5001))).toBe('page_too_large');
    expect(await codeOf(recall.read('s', 'tool-a', 1, 10_000_000))).toBe('page_too_large');
    expect(await codeOf(recall.read('s', 'tool-a', 4))).toBe('page_out_of_range');
    expect(await codeOf(recall.read('s', 'tool-a', 0))).toBe('page_out_of_range');
    expect(await codeOf(recall.read('s', 'tool-a', 1.5))).toBe('page_out_of_range');
    expect((await recall.read('s', 'tool-a', 3)).text).toBe('x'.repeat(500));
    expect((await recall.read('s', 'tool-a', 1, 5000)).pages).toBe(1);
  });

  it('refuses forged references before any read, and references of other sessions', async () => {
    const { storage, inner } = countingStorage();
    let loads = 0;
    const spy: StorageAdapter = {
      ...storage,
      loadArtifact: async (sessionId, ref) => {
        loads++;
        return inner.loadArtifact(sessionId, ref);
      },
    };
    const recall = new RecallArchive(spy);
    await recall.storage.saveArtifact!('alice', sampleArtifact('alice', 'tool-secret', 'alice secret'));
    for (const ref of FORGED_REFS)
      expect(await codeOf(recall.read('bob', ref as string)), String(ref)).toBe('invalid_ref');
    expect(loads).toBe(0);
    expect(await codeOf(recall.read('bob', 'tool-secret'))).toBe('unknown_ref');
    expect(await codeOf(recall.read('bob', 'tool-doesnotexist'))).toBe('unknown_ref');
    expect((await recall.read('alice', 'tool-secret')).text).toBe('alice secret');
  });

  it('treats an artifact a third-party adapter returns for the wrong session or ref as unknown', async () => {
    const liar: StorageAdapter = {
      name: 'liar',
      saveTranscript: async () => '',
      saveSummary: async () => '',
      saveEvent: async () => {},
      loadArtifact: async (_sessionId, ref) => sampleArtifact('someone-else', ref, 'their text'),
      listArtifacts: async () => [sampleArtifact('someone-else', 'tool-x', 'their text')],
    };
    const recall = new RecallArchive(liar);
    expect(await codeOf(recall.read('me', 'tool-x'))).toBe('unknown_ref');
    expect(await recall.search('me', 'their text')).toEqual([]);
  });

  it('says an artifact that exists but is truncated is unreadable, naming its ref (not "unknown ref")', async () => {
    const root = await mkdtemp(join(tmpdir(), 'recall-corrupt-'));
    try {
      const recall = new RecallArchive(fsStorage({ path: root }));
      const file = await recall.storage.saveArtifact!(
        's',
        sampleArtifact('s', 'tool-cut1', 'the original output '.repeat(50)),
      );
      await recall.storage.saveArtifact!('s', sampleArtifact('s', 'tool-whole1', 'still readable output'));
      const text = await readFile(file, 'utf8');
      await writeFile(file, text.slice(0, Math.floor(text.length / 2)));
      const error = await recall.read('s', 'tool-cut1').then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isRecallError(error) ? error.code : String(error)).toBe('archive_unreadable');
      expect((error as Error).message).toContain('"tool-cut1"');
      expect((error as Error).message).not.toContain(root);
      // The other artifacts still read and search as before.
      expect((await recall.read('s', 'tool-whole1')).text).toBe('still readable output');
      expect((await recall.search('s', 'readable')).map((hit) => hit.ref)).toEqual(['tool-whole1']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('says when the storage keeps no originals, and hides storage failures behind a clear error', async () => {
    const bare: StorageAdapter = {
      name: 'bare',
      saveTranscript: async () => '',
      saveSummary: async () => '',
      saveEvent: async () => {},
    };
    expect(await codeOf(new RecallArchive(bare).read('s', 'tool-a'))).toBe('recall_unavailable');
    expect(new RecallArchive(bare).storage.saveArtifact).toBeUndefined();
    const broken: StorageAdapter = {
      ...bare,
      loadArtifact: async () => {
        throw new Error('EACCES: /srv/archive/alice/artifacts/tool-a.json');
      },
      listArtifacts: async () => {
        throw new Error('EACCES: /srv/archive/alice/artifacts');
      },
    };
    const result = await runRecallTool(new RecallArchive(broken), 's', { ref: 'tool-a' });
    expect(result).toMatchObject({ isError: true, code: 'archive_unreadable' });
    expect(result.text).not.toContain('/srv/archive');
    expect((await runRecallTool(new RecallArchive(broken), 's', { query: 'x' })).code).toBe(
      'archive_unreadable',
    );
  });
});

describe('RecallArchive.search', () => {
  const artifacts = (sessionId: string): ArchivedArtifact[] => [
    sampleArtifact(
      sessionId,
      'tool-grep1',
      'services/ledger/src/invoice_rounding.ts:42: return applyRounding(total, mode)',
      {
        toolName: 'grep',
      },
    ),
    sampleArtifact(
      sessionId,
      'tool-logs1',
      `${'2025-03-12T10:00:00Z info worker started\n'.repeat(200)}2025-03-12T10:05:00Z error settlement cut-off exceeded for tenant 7\n${'2025-03-12T10:06:00Z info idle\n'.repeat(200)}`,
      { toolName: 'bash' },
    ),
    sampleArtifact(
      sessionId,
      'sum-v1',
      '[3] user: The p99 latency budget for POST /ledger/entries is 240 ms.',
      { kind: 'summarized', messageIndex: 3 },
    ),
  ];

  it('builds no index until the first query, then keeps it up to date from writes without listing again', async () => {
    const { storage, counts } = countingStorage();
    const recall = new RecallArchive(storage, { passageChars: 400 });
    for (const artifact of artifacts('s')) await recall.storage.saveArtifact!('s', artifact);
    expect(recall.indexedSessions()).toEqual([]);
    expect(counts.list).toBe(0);
    const hits = await recall.search('s', 'settlement cut-off');
    expect(counts.list).toBe(1);
    expect(recall.indexedSessions()).toEqual(['s']);
    expect(hits[0]?.ref).toBe('tool-logs1');
    expect(hits[0]?.text).toContain('settlement cut-off exceeded for tenant 7');
    expect(hits[0]?.text.length).toBeLessThanOrEqual(400);
    expect(hits[0]?.page).toBe(Math.floor(hits[0]!.start / 6000) + 1);
    // A later write reaches the built index directly.
    await recall.storage.saveArtifact!(
      's',
      sampleArtifact('s', 'tool-git1', 'On branch fix/ledger-rounding-42', { toolName: 'bash' }),
    );
    expect((await recall.search('s', 'which branch'))[0]?.ref).toBe('tool-git1');
    // A reference saved again (a cut made deeper) replaces its passages.
    await recall.storage.saveArtifact!(
      's',
      sampleArtifact('s', 'tool-git1', 'On branch hotfix/tenant-quota-17', { createdAt: 2 }),
    );
    const again = await recall.search('s', 'branch');
    expect(again.map((hit) => hit.text)).toEqual(['On branch hotfix/tenant-quota-17']);
    expect(counts.list).toBe(1);
  });

  it('never returns passages of another session', async () => {
    const recall = new RecallArchive(memoryStorage());
    for (const artifact of artifacts('alice')) await recall.storage.saveArtifact!('alice', artifact);
    expect(await recall.search('bob', 'applyRounding invoice rounding latency budget settlement')).toEqual(
      [],
    );
    expect(recall.indexedSessions()).toEqual(['bob']);
    await recall.storage.saveArtifact!('alice', sampleArtifact('alice', 'tool-late', 'applyRounding late'));
    expect(await recall.search('bob', 'applyRounding')).toEqual([]);
    expect((await recall.search('alice', 'applyRounding')).map((hit) => hit.ref).sort()).toEqual([
      'tool-grep1',
      'tool-late',
    ]);
  });

  it("with refresh 'list', sees artifacts another process wrote straight to the storage", async () => {
    const inner = memoryStorage();
    const recall = new RecallArchive(inner, { refresh: 'list' });
    expect(await recall.search('s', 'latency budget')).toEqual([]);
    await inner.saveArtifact('s', artifacts('s')[2]!);
    expect((await recall.search('s', 'latency budget'))[0]?.ref).toBe('sum-v1');
  });

  it('finds identifiers, file names and numbers through their parts and a prefix', async () => {
    const recall = new RecallArchive(memoryStorage());
    for (const artifact of artifacts('s')) await recall.storage.saveArtifact!('s', artifact);
    expect((await recall.search('s', 'invoice_rounding'))[0]?.ref).toBe('tool-grep1');
    expect((await recall.search('s', 'p99 latency'))[0]?.ref).toBe('sum-v1');
    expect((await recall.search('s', 'settle'))[0]?.ref).toBe('tool-logs1');
  });

  it('indexes pathological text (a 1 MB run of one character, a 100 KB line) and still finds words next to it', async () => {
    const recall = new RecallArchive(memoryStorage());
    const text = `${'a'.repeat(1_000_000)} needle-one ${'b c '.repeat(25_000)} needle-two`;
    await recall.storage.saveArtifact!('s', sampleArtifact('s', 'tool-huge', text));
    const hits = await recall.search('s', 'needle two');
    expect(hits[0]?.ref).toBe('tool-huge');
    expect(hits.some((hit) => hit.text.includes('needle-two'))).toBe(true);
  });

  it('refuses empty, oversized and malformed queries', async () => {
    const recall = new RecallArchive(memoryStorage());
    expect(await codeOf(recall.search('s', '   '))).toBe('invalid_input');
    expect(await codeOf(recall.search('s', 'x'.repeat(501)))).toBe('invalid_input');
    expect(await codeOf(recall.search('s', 'ok', 11))).toBe('invalid_input');
    expect(recall.indexedSessions()).toEqual([]);
  });
});

describe('runRecallTool', () => {
  it('answers a ref with its page and a pointer to the next one, and a query with refs to pass back', async () => {
    const recall = new RecallArchive(memoryStorage(), { pageChars: 100 });
    await recall.storage.saveArtifact!(
      's',
      sampleArtifact('s', 'tool-abc', `${'0123456789'.repeat(25)} tail`),
    );
    const page = await runRecallTool(recall, 's', { ref: ' "tool-abc" ', query: null, page: null });
    expect(page.isError).toBe(false);
    expect(page.text).toContain('[recall ref "tool-abc": output of tool "grep", page 1 of 3');
    expect(page.text).toContain('[more: recall {"ref": "tool-abc", "page": 2}]');
    const hits = await runRecallTool(recall, 's', JSON.stringify({ query: 'tail' }));
    expect(hits.text).toContain('ref "tool-abc"');
  });

  it('turns bad input into an error result naming what to pass', async () => {
    const recall = new RecallArchive(memoryStorage());
    const cases: [unknown, string][] = [
      [{}, 'invalid_input'],
      [{ ref: 'tool-a', query: 'x' }, 'invalid_input'],
      [{ ref: 7 }, 'invalid_input'],
      [{ ref: 'tool-a', session: 'other' }, 'invalid_input'],
      [[], 'invalid_input'],
      ['not json', 'invalid_input'],
      [{ ref: '../alice/tool-a' }, 'invalid_ref'],
      [{ ref: '/etc/passwd' }, 'invalid_ref'],
      [{ ref: 'tool-nothere' }, 'unknown_ref'],
      [{ ref: 'tool-nothere', page_chars: 1e9 }, 'page_too_large'],
    ];
    for (const [input, code] of cases) {
      const result = await runRecallTool(recall, 's', input);
      expect(result, JSON.stringify(input)).toMatchObject({ isError: true, code });
      expect(result.text).toMatch(new RegExp(`^recall error \\(${code}\\): `));
    }
  });

  it('never answers half a surrogate pair (an echo cut mid-emoji, or one in the archive)', async () => {
    const recall = new RecallArchive(memoryStorage());
    await recall.storage.saveArtifact!(
      's',
      sampleArtifact('s', 'tool-bin', `binary \ud800 junk ${'word '.repeat(30)}`),
    );
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    const inputs = [
      { ref: `${'x'.repeat(79)}\u{1f600}` },
      { [`${'k'.repeat(59)}\u{1f600}`]: 1 },
      { ref: 'tool-bin' },
      { query: 'binary junk' },
    ];
    for (const input of inputs) {
      const result = await runRecallTool(recall, 's', input);
      expect(result.text, JSON.stringify(input)).not.toMatch(lone);
    }
    // Whole pairs stay.
    expect((await runRecallTool(recall, 's', { ref: '\u{1f600}' })).text).toContain('\u{1f600}');
  });
});
