import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactMessage } from '../../src/core/messages/message.js';
import { redactMessage } from '../../src/core/preflight/cascade/summarize-remainder.js';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { fsStorage } from '../../src/storage/fs/fs-storage.js';
import { openaiSummarizer } from '../../src/summarizers/openai/openai-summarizer.js';
import { useProviderTestServer } from '../fixtures/summarizers/use-provider-test-server.js';
import { leakFinder } from './support/secret-shapes.js';

/**
 * A secret split over two adjacent text blocks of one message: each block redacted alone let
 * the half without a prefix (20 characters of a GitHub token, a whole password after a block
 * ending in `password=`) go to the archive and to the summarizer's provider. No run of 8
 * characters of either secret may leave.
 */

const startServer = useProviderTestServer();
const FILL = 'the deploy script reads the environment and rolls back on failure. '.repeat(12);
const GITHUB = 'ghp_x7Kq2M9vTz4Lw8Rj3Nc6Pb1Yd5Hf0Gs2Ua7E';
const PASSWORD = 'Zq8vLm2xKp4Rt7Wn';
const find = leakFinder(
  [
    { kind: 'github', secret: GITHUB, text: GITHUB },
    { kind: 'password', secret: PASSWORD, text: PASSWORD },
  ],
  8,
);

function history(): Record<string, unknown>[] {
  return [
    { role: 'user', content: 'deploy the service' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: `I will push with the token ${GITHUB.slice(0, 20)}` },
        { type: 'text', text: `${GITHUB.slice(20)} as the deploy bot. ${FILL}` },
      ],
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"cmd":"deploy"}' } },
      ],
    },
    {
      role: 'tool',
      tool_call_id: 'call_1',
      content: [
        { type: 'text', text: 'config read: db_password=' },
        { type: 'text', text: `${PASSWORD}\nthe host is db.internal. ${FILL}` },
      ],
    },
    { role: 'assistant', content: `Deployed. ${FILL}` },
    { role: 'user', content: 'thanks' },
  ];
}

async function readTree(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) parts.push(await readFile(join(entry.parentPath, entry.name), 'utf8'));
  }
  return parts.join('\n');
}

describe('a secret split over two text blocks of one message', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'split-blocks-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('leaves no run of 8 of its characters in the archive or on the summarizer wire', async () => {
    const server = await startServer({
      handler: () => ({ text: '## Goals\n- deploy', usage: { inputTokens: 10, outputTokens: 5 } }),
    });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'test', maxRetries: 0 });
    // The test can fail: both secrets are in the input, split.
    expect(find(JSON.stringify(history())).length).toBeGreaterThanOrEqual(2);
    const archive = join(dir, 'archive');
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6000,
      storage: fsStorage({ path: archive }),
      summarizer: openaiSummarizer({ model: 'gpt-4o-mini', client, maxRetries: 0 }),
    });
    await manager.manualCompact('split-blocks', history());
    await manager.shutdown();

    expect(server.requests.length).toBe(1);
    const wire = server.requests[0]!.rawBody;
    expect(wire).toContain('as the deploy bot');
    expect(wire).toContain('the host is db.internal');
    expect(find(wire)).toEqual([]);
    const archived = await readTree(archive);
    expect(archived).toContain('as the deploy bot');
    expect(find(archived)).toEqual([]);
  });

  it('in an Anthropic tool_result with two text blocks, redacted for the summarizer', () => {
    const blocks = [
      { type: 'text', text: `token ${GITHUB.slice(0, 16)}` },
      { type: 'text', text: `${GITHUB.slice(16)} accepted` },
    ];
    const message: CompactMessage = {
      id: 'm1',
      role: 'user',
      kind: 'message',
      text: '',
      toolCalls: [],
      toolResults: [{ callId: 'toolu_1', output: blocks.map((block) => block.text).join('\n') }],
      format: 'anthropic',
      raw: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: blocks }] },
    } as unknown as CompactMessage;
    expect(find(JSON.stringify(message)).length).toBeGreaterThanOrEqual(1);
    const redacted = redactMessage(message, getDefaultRedactor());
    expect(redacted.toolResults[0]!.output).toContain('accepted');
    expect(find(JSON.stringify(redacted))).toEqual([]);
  });
});
