import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles } from '../../../test/support/cli-fixtures.js';
import { CompactManager } from '../../core/manager/compact-manager.js';
import { fsStorage } from '../../storage/fs/fs-storage.js';
import { syntheticSession } from '../../testing/synthetic-session.js';
import { EXIT_CODES } from '../run-cli.js';

const temp = useTempFiles();

/** An archived session whose calls had their usage reported (as the SDK integrations do). */
async function archivedWithUsage() {
  const dir = temp.path('usage-archive');
  const manager = new CompactManager({
    model: 'claude-sonnet-4-6',
    maxContextTokens: 6_000,
    storage: fsStorage({ path: dir }),
  });
  const session = syntheticSession({ turns: 24, seed: 9 });
  let calls = 0;
  let compactions = 0;
  for (let end = 4; end <= session.length; end++) {
    // A call point: the history does not end on an unanswered tool call.
    if ((session[end - 1] as { tool_calls?: unknown[] }).tool_calls?.length) continue;
    if ((session[end] as { role?: string } | undefined)?.role === 'tool') continue;
    calls++;
    const sent = await manager.compact('costly', session.slice(0, end));
    if (sent.applied) compactions++;
    // The provider read most of the request from its cache.
    manager.recordUsage('costly', {
      inputTokens: Math.round(sent.tokensAfter * 0.1),
      cacheReadInputTokens: Math.round(sent.tokensAfter * 0.9),
      outputTokens: 50,
    });
  }
  await manager.shutdown();
  return { folder: join(dir, 'costly'), calls, compactions };
}

describe('the cost in status and report', () => {
  it('status prints the cost snapshot and report marks the calls with reported usage', async () => {
    const { folder, calls, compactions } = await archivedWithUsage();
    expect(compactions).toBeGreaterThan(1);
    const status = await cli(['status', folder]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(
      /cost: \d+ reported requests, (8\d|9\d)\.\d% of the input from the prompt cache, billed-equivalent input [\d,]+ tokens, \d+ prefix rewrites/,
    );
    const json = JSON.parse((await cli(['status', folder, '--json'])).stdout);
    expect(json.cost.requests).toBe(calls);
    const out = temp.path('cost.html');
    expect((await cli(['report', folder, '--out', out])).code).toBe(0);
    const html = await readFile(out, 'utf8');
    expect(html).toMatch(new RegExp(`prompt cache: \\d+\\.\\d% hit over ${calls} reported requests`));
    // The archive keeps the calls that compacted: each has its usage point.
    expect(html.match(/<circle class="usage-point"/g)?.length).toBe(compactions);
    // Billed-equivalent input per call (issue 34, point 6): the mean, and a row per call with usage.
    expect(html).toMatch(/billed-equivalent input per reported request: [\d,]+ tokens/);
    const table = /<table class="usage">[\s\S]*?<\/table>/.exec(html)?.[0] ?? '';
    const rows = [
      ...table.matchAll(/<tr><td>(\d+)<\/td><td>[\d,]+<\/td><td>(\d+)%<\/td><td>([\d,]+)<\/td><\/tr>/g),
    ];
    expect(rows).toHaveLength(compactions);
    for (const row of rows) {
      expect(Number(row[2])).toBeGreaterThanOrEqual(80);
      expect(Number(row[3]!.replaceAll(',', ''))).toBeGreaterThan(0);
    }
  });

  it('a session without reported usage says so', async () => {
    const dir = temp.path('plain-archive');
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6_000,
      storage: fsStorage({ path: dir }),
    });
    await manager.compact('plain', syntheticSession({ turns: 24, seed: 3 }), { force: true });
    await manager.shutdown();
    expect((await cli(['status', join(dir, 'plain')])).stdout).toContain('cost: no usage reported');
  });

  it.each([
    ['empty events', ''],
    ['events that are not JSON', 'not json\n'],
    ['events of the wrong shape', '{"hello": "world"}\n'],
  ])('status of a folder with %s: one line and exit 2', async (name, text) => {
    const folder = temp.path(name.replaceAll(' ', '-'));
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'events.jsonl'), text);
    const run = await cli(['status', folder]);
    expect(run.code).toBe(EXIT_CODES.badInput);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
