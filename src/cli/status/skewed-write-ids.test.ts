/**
 * Left by review-80b: `status` and `replay` took "the newest" summary and transcript of an
 * archive folder by write id, time-ordered in one process only. Two processes with skewed
 * clocks writing one fs archive (a shared folder): the one an hour ahead wrote v3, the other v5
 * after it, and `status` showed v3's summary, `replay` started from v3's transcript. The newest
 * is now the highest version (versions never go down), then the latest write of that version.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempFiles } from '../../../test/support/cli-fixtures.js';
import { ARCHIVE_NAMES } from '../../storage/session-path.js';
import { readLatestTranscript } from '../replay/read-transcript.js';
import { readSessionStatus } from './status-command.js';

const temp = useTempFiles();
const NOW = Date.UTC(2026, 11, 1);
/** A write id as a process whose clock reads `time` names its write. */
const idAt = (time: number, tail: string) => `${time.toString(36).padStart(9, '0')}-${tail}`;
const AHEAD = idAt(NOW + 3_600_000, 'aaaaaaaa');
const BEHIND = idAt(NOW, 'bbbbbbbb');

async function skewedFolder(): Promise<string> {
  const folder = temp.path('skewed');
  await mkdir(folder, { recursive: true });
  const summary = (step: number) =>
    JSON.stringify({ text: `<COMPACT-SUMMARY v${step}>\nv${step}\n</COMPACT-SUMMARY>`, step, tokens: 10 });
  // v3 written by the process an hour ahead, v5 after it by the other.
  await writeFile(join(folder, ARCHIVE_NAMES.summary(3, AHEAD)), summary(3));
  await writeFile(join(folder, ARCHIVE_NAMES.summary(5, BEHIND)), summary(5));
  const transcript = (text: string) => `${JSON.stringify({ role: 'user', content: text })}\n`;
  await writeFile(join(folder, ARCHIVE_NAMES.transcript(3, AHEAD)), transcript('before v3'));
  await writeFile(join(folder, ARCHIVE_NAMES.transcript(5, BEHIND)), transcript('before v5'));
  // Two writes of v5 (a compaction that only cleared keeps the version): the later one.
  await writeFile(
    join(folder, ARCHIVE_NAMES.transcript(5, idAt(NOW + 1, 'cccccccc'))),
    transcript('v5 again'),
  );
  return folder;
}

describe('the newest of an archive folder written by processes with skewed clocks', () => {
  it('is the highest version, then its latest write', async () => {
    const folder = await skewedFolder();
    const status = await readSessionStatus(folder);
    expect(status.summary?.version).toBe(5);
    expect(status.summary?.text).toContain('v5');
    expect(await readLatestTranscript(folder)).toEqual([{ role: 'user', content: 'v5 again' }]);
  });
});
