/**
 * The report reads true (issue 37, point 5): calls numbered as the run made them when the
 * report is built from an archive (compacting calls only); kept counts that count what was
 * kept verbatim, not cleared tool pairs; the chart plots what was sent.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { callPoints } from '../../src/cli/replay/call-points.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { jsonlExporter } from '../../src/exporters/jsonl/jsonl-exporter.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { syntheticSession } from '../../src/testing/synthetic-session.js';
import { charCounter } from '../support/background-fixtures.js';
import { cli, useTempFiles } from '../support/cli-fixtures.js';

const temp = useTempFiles();

/** The `data-call` of each card of a report page. */
const cardCalls = (html: string) =>
  [...html.matchAll(/<section class="card[^"]*"[^>]*data-call="(\d+)"/g)].map((match) => Number(match[1]));

describe('a report from an archive folder', () => {
  it('numbers calls as the trace of the same run does (18, 24, 36), not 1, 2, 3', async () => {
    const root = temp.path('archive');
    const tracePath = temp.path('run-trace.jsonl');
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6_000,
      storage: fsStorage({ path: root }),
      exporters: [jsonlExporter({ path: tracePath })],
    });
    const session = syntheticSession({ turns: 30, seed: 5 });
    for (const end of callPoints(session)) await manager.compact('numbered', session.slice(0, end));
    await manager.shutdown();

    const fromTrace = await cli(['report', tracePath, '--out', temp.path('trace.html')]);
    const fromArchive = await cli(['report', join(root, 'numbered'), '--out', temp.path('archive.html')]);
    expect(fromTrace.code).toBe(0);
    expect(fromArchive.code).toBe(0);
    const traceCalls = cardCalls(await readFile(temp.path('trace.html'), 'utf8'));
    const archiveCalls = cardCalls(await readFile(temp.path('archive.html'), 'utf8'));
    expect(traceCalls.length).toBeGreaterThan(1);
    expect(traceCalls[0]).toBeGreaterThan(1);
    expect(archiveCalls).toEqual(traceCalls);
  });
});

describe('kept counts', () => {
  it('count tool pairs and turns kept verbatim; cleared pairs are not kept', async () => {
    const messages: Record<string, unknown>[] = [{ role: 'system', content: 'You fix bugs.' }];
    for (let t = 0; t < 12; t++) {
      messages.push({ role: 'user', content: `Step ${t}: look at file-${t}.ts` });
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: `c${t}`, type: 'function', function: { name: 'read', arguments: `{"f":"file-${t}.ts"}` } },
        ],
      });
      messages.push({
        role: 'tool',
        tool_call_id: `c${t}`,
        content: `contents of file-${t}: `.padEnd(600, 'x'),
      });
      messages.push({ role: 'assistant', content: `Read file-${t}.ts.` });
    }
    const manager = new CompactManager({
      maxContextTokens: 9_000,
      tokenCounter: charCounter,
      policy: { hardCapBuffer: 0, keepRecentTurns: 6, keepToolIoPairs: 4 },
    });
    const result = await manager.compact('kept', messages);
    await manager.shutdown();
    expect(result.levels.map((level) => level.level)).toEqual(['clear_tool_results']);
    const out = result.messages as Record<string, unknown>[];
    const original = new Map(
      messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]),
    );
    const verbatimPairs = out.filter((m) => m.role === 'tool' && original.get(m.tool_call_id) === m.content);
    const cleared = result.levels[0]!.count;
    expect(cleared).toBeGreaterThan(0);
    expect(result.kept.toolPairs).toBe(verbatimPairs.length);
    expect(result.kept.toolPairs).toBe(12 - cleared);
    // A turn whose tool result was cleared is not kept verbatim.
    expect(result.kept.recentTurns).toBe(12 - cleared);
    expect(result.kept.pinned).toBe(1);
  });
});
