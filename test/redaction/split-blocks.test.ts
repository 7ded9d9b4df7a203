import { describe, expect, it } from 'vitest';
import type { CompactMessage } from '../../src/core/messages/message.js';
import { redactMessage } from '../../src/core/preflight/cascade/summarize-remainder.js';
import { getDefaultRedactor } from '../../src/core/redaction/redactor.js';
import { useProviderTestServer } from '../fixtures/summarizers/use-provider-test-server.js';
import { compactToWireAndArchive } from './support/compact-to-wire-and-archive.js';
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

describe('a secret split over two text blocks of one message', () => {
  it('leaves no run of 8 of its characters in the archive or on the summarizer wire', async () => {
    // The test can fail: both secrets are in the input, split.
    expect(find(JSON.stringify(history())).length).toBeGreaterThanOrEqual(2);
    const { requests, wire, archived } = await compactToWireAndArchive(
      startServer,
      'split-blocks',
      history(),
    );
    expect(requests).toBe(1);
    expect(wire).toContain('as the deploy bot');
    expect(wire).toContain('the host is db.internal');
    expect(find(wire)).toEqual([]);
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
