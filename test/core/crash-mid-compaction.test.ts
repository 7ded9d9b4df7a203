/**
 * Issue 43, fourth defect: a process SIGKILLed mid-compaction. After a restart the fs archive
 * holds no temporary file, a summary file for every stored version, and `status` counts the
 * compactions the archive and the state hold. The child stops dead at a chosen point and says
 * so; it is killed on that line (no timing).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readSessionStatus } from '../../src/cli/status/status-command.js';
import type { SessionState } from '../../src/core/session/session-store.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { sessionFolderName } from '../../src/storage/session-path.js';

const child = new URL('../support/crash-compaction-child.ts', import.meta.url).pathname;
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Runs the child until it halts, then SIGKILLs it; resolves what it halted on. */
function crash(folder: string, stateFile: string, mode: string, at: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, folder, stateFile, mode, String(at)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    let halted = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.startsWith('HALT '));
      if (line && !halted) {
        halted = line.slice(5);
        proc.kill('SIGKILL');
      }
    });
    proc.once('exit', (_code, signal) => {
      if (signal === 'SIGKILL' && halted) resolve(halted);
      else reject(new Error(`the child ended without halting: ${output}`));
    });
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.map(String);
}

async function setup() {
  const root = await mkdtemp(join(tmpdir(), 'crash-compaction-'));
  dirs.push(root);
  const folder = join(root, 'archive');
  return { folder, stateFile: join(root, 'state.json'), session: join(folder, sessionFolderName('crash')) };
}

describe('a crash mid-compaction (issue 43)', () => {
  it('killed right after a state write: a summary file for every stored version, status counts them', async () => {
    const { folder, stateFile, session } = await setup();
    const halted = await crash(folder, stateFile, 'state', 4);
    const state = JSON.parse(await readFile(stateFile, 'utf8')) as SessionState;
    expect(halted).toBe(`state v${state.version}`);
    expect(state.version).toBeGreaterThanOrEqual(2);
    const names = await filesUnder(session);
    const steps = new Set(
      names.flatMap((name) => /^summary-(\d+)-/.exec(name)?.[1] ?? []).map((step) => Number(step)),
    );
    for (let version = 1; version <= state.version; version++)
      expect(steps.has(version), `summary file of v${version}`).toBe(true);
    const status = await readSessionStatus(session);
    expect(status.summary?.version).toBe(state.version);
    expect(status.compactions).toBeGreaterThanOrEqual(state.version);
    const transcripts = names.filter((name) => name.startsWith('transcript-pre-compact-')).length;
    expect(status.compactions).toBe(transcripts);
  });

  it('killed with an archive write half done: no temporary file is left once the archive is opened again', async () => {
    const { folder, stateFile, session } = await setup();
    const halted = await crash(folder, stateFile, 'link', 3);
    expect(halted).toMatch(/^link /);
    expect((await filesUnder(session)).filter((name) => name.endsWith('.tmp'))).toHaveLength(1);
    // The restart: a new writer opens the session's archive.
    const storage = fsStorage({ path: folder });
    await storage.saveSummary(
      'crash',
      {
        sessionId: 'crash',
        step: 99,
        text: 'after restart',
        tokens: 3,
        strategy: 'x',
        summarizer: 'x',
        coveredIds: [],
        createdAt: 1,
      },
      99,
    );
    await storage.close?.();
    expect((await filesUnder(session)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
