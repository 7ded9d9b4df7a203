import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { consoleExporter } from '../../src/exporters/console/console-exporter.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { openaiSummarizer } from '../../src/summarizers/openai/openai-summarizer.js';
import type { RecordedRequest } from '../../src/testing/provider-test-server.js';
import { useProviderTestServer } from '../fixtures/summarizers/use-provider-test-server.js';
import { leakFinder, oneOfEachKind } from './support/secret-shapes.js';

/**
 * Tool arguments and outputs far larger than the window, one line each (no whitespace to
 * cut at), dense with secrets: the pipeline shortens, cuts and clears them, and an LLM
 * summarizer that quotes its input writes the summary. No secret reaches events, the
 * console, the archive or a summary.
 */

const startServer = useProviderTestServer();

/** A model that quotes the first 3,000 characters of what it was given. */
function echo(request: RecordedRequest) {
  const body = request.body as { messages: { content: string }[] };
  const input = body.messages.map((message) => message.content).join('\n');
  return { text: `## Goals\n- ${input.slice(0, 3000)}`, usage: { inputTokens: 100, outputTokens: 50 } };
}

async function readTree(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    parts.push(path, entry.isFile() ? await readFile(path, 'utf8') : '');
  }
  return parts.join('\n');
}

describe('oversized one-line tool arguments and outputs full of secrets', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'redaction-oversized-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each([1, 2, 3, 4])('seed %i', async (seed) => {
    const server = await startServer({ handler: echo });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 0 });
    const secrets = oneOfEachKind(seed * 1000);
    const find = leakFinder(secrets);
    const blob = JSON.stringify(
      Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`k${i}`, secrets[i % secrets.length]!.text])),
    );
    const messages: Record<string, unknown>[] = [];
    for (let turn = 0; turn < 12; turn++) {
      messages.push({ role: 'user', content: `Turn ${turn}: inspect the config.` });
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: {
              name: 'write',
              arguments: JSON.stringify({ path: 'cfg.json', body: `${'x'.repeat(turn * 97)} ${blob}` }),
            },
          },
        ],
      });
      messages.push({ role: 'tool', tool_call_id: 'call_0', content: `${'y'.repeat(turn * 131)} ${blob}` });
    }
    const sinks = { events: [] as string[], console: [] as string[] };
    const archive = join(dir, `archive-${seed}`);
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 16_000,
      summarizer: openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 0 }),
      storage: fsStorage({ path: archive }),
      exporters: [
        consoleExporter({ format: 'json', stream: { write: (chunk) => sinks.console.push(chunk) } }),
      ],
    });
    manager.on('*', (event) => void sinks.events.push(JSON.stringify(event)));
    const first = await manager.preflight('oversized', messages);
    const forced = await manager.manualCompact('oversized', messages);
    await manager.shutdown();

    expect(server.requests.length).toBeGreaterThan(0);
    const summaries = JSON.stringify(
      [...first, ...forced.messages].filter((message) => JSON.stringify(message).includes('COMPACT-SUMMARY')),
    );
    expect(summaries.length).toBeGreaterThan(200);
    expect(find(JSON.stringify(messages)).length).toBeGreaterThan(0);
    expect(find(sinks.events.join('\n')), 'events').toEqual([]);
    expect(find(sinks.console.join('')), 'console').toEqual([]);
    expect(find(await readTree(archive)), 'archive').toEqual([]);
    expect(find(summaries), 'summaries').toEqual([]);
  });
});
