import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { expandTemplates, survivingParts } from '../support/secret-templates.js';

/**
 * Issue 36: the shapes the review found leaking reach no sink through the one redactor, a
 * token written with a JSON unicode escape inside tool arguments included: the archive
 * (transcript, originals, summaries, events) and the events of a compaction. A benign line of
 * code that handles a token by name reaches the archive unchanged.
 */

const [token, railsSecret, mysqlPassword, openaiKey] = expandTemplates(
  'issue-36-sinks',
  '⟨t:ALNUM:36⟩',
  '⟨s:HEX:128⟩',
  '⟨p:ALNUM:16⟩',
  '⟨k:ALNUM:40⟩',
) as [string, string, string, string];
/** What must not survive: the token after its escaped first letter, and the other values. */
const SECRETS = [`hp_${token}`, railsSecret, mysqlPassword, openaiKey];
const BENIGN_CODE = 'const token = getToken(); if (token) { retry(token); }';

function history(): Record<string, unknown>[] {
  const filler = 'The deploy script checks the health endpoint and rolls back on failure. '.repeat(40);
  return [
    { role: 'user', content: `Log in to GitHub and load the database. ${filler}` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          // The model wrote the token's first letter as a JSON unicode escape.
          function: { name: 'shell', arguments: `{"cmd":"gh auth login --with-token \\u0067hp_${token}"}` },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: `Logged in. ${filler}` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_2',
          type: 'function',
          function: {
            name: 'shell',
            arguments: JSON.stringify({
              cmd: `SECRET_KEY_BASE=${railsSecret} OPENAI_KEY=${openaiKey} mysql -uroot -p${mysqlPassword} shop`,
            }),
          },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_2', content: `${BENIGN_CODE}\n${filler}` },
    { role: 'user', content: 'Now summarize what happened.' },
  ];
}

async function readTree(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) parts.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return parts.join('\n');
}

const leaks = (text: string) => SECRETS.flatMap((secret) => survivingParts(secret, text));

describe('issue 36 shapes through a compaction: archive and events', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'escaped-secrets-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a unicode-escaped token in tool arguments, SECRET_KEY_BASE, OPENAI_KEY, mysql -p: nowhere', async () => {
    const messages = history();
    // The test can fail: every secret is in the input, as the sinks would write it.
    expect(leaks(JSON.stringify(messages)).length).toBeGreaterThan(0);
    for (const secret of SECRETS) expect(JSON.stringify(messages)).toContain(secret);

    const archive = join(dir, 'archive');
    const manager = new CompactManager({ model: 'gpt-4o', storage: fsStorage({ path: archive }) });
    const events: string[] = [];
    manager.on('*', (event) => void events.push(JSON.stringify(event)));
    const result = await manager.compact('issue-36-sinks', messages, { force: true });
    await manager.shutdown();

    expect(result.messages.length).toBeGreaterThan(0);
    const archived = await readTree(archive);
    const emitted = events.join('\n');
    // Both sinks saw the session (an empty sink would pass trivially).
    expect(archived).toContain('gh auth login --with-token');
    expect(emitted.length).toBeGreaterThan(0);
    expect(leaks(archived), 'archive').toEqual([]);
    expect(leaks(emitted), 'events').toEqual([]);
    // Benign code that names a token survives as it is.
    expect(archived).toContain(BENIGN_CODE);
    // The caller's messages are never changed.
    expect(JSON.stringify(messages)).toEqual(JSON.stringify(history()));
  });
});
