/**
 * Issue 47 point 1: a fresh process's first call on a compacted session read the summary key
 * file (a synchronous read) and loaded Node's HMAC inside the call. `prepare()` (called by
 * `CompactManager.ready()`) reads it ahead when the file exists, and never creates it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { CompactManager } from '../manager/compact-manager.js';
import { SUMMARY_KEY_FILE_ENV, SummaryMarks } from './summary-mark.js';

describe('SummaryMarks.prepare', () => {
  let folder: string;
  let file: string;
  const saved = process.env[SUMMARY_KEY_FILE_ENV];
  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'summary-prepare-'));
    file = join(folder, 'keys', 'summary-key');
    process.env[SUMMARY_KEY_FILE_ENV] = file;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env[SUMMARY_KEY_FILE_ENV];
    else process.env[SUMMARY_KEY_FILE_ENV] = saved;
    rmSync(folder, { recursive: true, force: true });
  });

  it('reads an existing key file ahead: the first summary signed after it reads no file', () => {
    const signed = new SummaryMarks().format('s', 1, 'the summary body');
    expect(existsSync(file)).toBe(true);
    const fresh = new SummaryMarks();
    fresh.prepare();
    // Gone after prepare: a read on first use would create a new key, and sign otherwise.
    rmSync(file);
    expect(fresh.format('s', 1, 'the summary body')).toBe(signed);
    expect(existsSync(file)).toBe(false);
  });

  it('creates no key file when there is none (ready() of a manager that may never summarize)', async () => {
    new SummaryMarks().prepare();
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000 });
    await manager.ready();
    expect(existsSync(file)).toBe(false);
    await manager.shutdown();
  });

  it("a manager's ready() reads the existing key file: its first compaction reads none", async () => {
    new SummaryMarks().format('s', 1, 'body');
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    await manager.ready();
    rmSync(file);
    const history = syntheticSession({ turns: 40, seed: 7 });
    const result = await manager.compact('s', history);
    expect(result.summary).toBeDefined();
    expect(existsSync(file)).toBe(false);
    await manager.shutdown();
  });
});
