import { describe, expect, it } from 'vitest';
import { MESSAGE_CODECS } from '../../src/core/messages/formats/detect-format.js';
import { redactMessages } from '../../src/core/preflight/cascade/summarize-remainder.js';
import { artifactsOf } from '../../src/core/preflight/outcome/archive-originals.js';
import { getDefaultRedactor, redactDeep } from '../../src/core/redaction/redactor.js';
import { crossingSeams, redactJoined } from '../../src/core/redaction/split-secrets.js';
import { useProviderTestServer } from '../fixtures/summarizers/use-provider-test-server.js';
import { compactToWireAndArchive } from './support/compact-to-wire-and-archive.js';
import { leakFinder } from './support/secret-shapes.js';

/**
 * A secret split over two messages: a key pasted in two user turns, a tool's output streamed
 * into two tool results. The summarizer reads them as one transcript and the archive keeps them
 * side by side, so the half without a prefix (key material) must not leave whole: no run of 8
 * characters of either secret in the archive or on the summarizer's wire.
 */

const startServer = useProviderTestServer();
const FILL = 'the deploy script reads the environment and rolls back on failure. '.repeat(12);
const OPENAI = 'sk-proj-Qx7Lm2Vb9Kt4Rw8Zn3Pc6Hd1Yf5Js0Ga2Ue7Tb4Nk9Mq3Wv';
const GITHUB = 'ghp_x7Kq2M9vTz4Lw8Rj3Nc6Pb1Yd5Hf0Gs2Ua7E';
const find = leakFinder(
  [
    { kind: 'openai', secret: OPENAI, text: OPENAI },
    { kind: 'github', secret: GITHUB, text: GITHUB },
  ],
  8,
);

function history(): Record<string, unknown>[] {
  return [
    { role: 'user', content: `deploy the service. ${FILL}` },
    { role: 'user', content: `use my key ${OPENAI.slice(0, 22)}` },
    { role: 'user', content: `${OPENAI.slice(22)} for the summaries` },
    {
      role: 'assistant',
      content: 'Reading the two halves of the config.',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"part":1}' } },
        { id: 'call_2', type: 'function', function: { name: 'read', arguments: '{"part":2}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: `${FILL}\ndeploy bot token: ${GITHUB.slice(0, 16)}` },
    {
      role: 'tool',
      tool_call_id: 'call_2',
      content: `${GITHUB.slice(16)}\nthe host is db.internal. ${FILL}`,
    },
    { role: 'assistant', content: `Deployed. ${FILL}` },
    { role: 'user', content: 'thanks' },
  ];
}

describe('a secret split over two messages', () => {
  it('leaves no run of 8 of its characters in the archive or on the summarizer wire', async () => {
    // The test can fail: both secrets are in the input, split.
    expect(find(JSON.stringify(history())).length).toBeGreaterThanOrEqual(2);
    const { requests, wire, archived } = await compactToWireAndArchive(
      startServer,
      'split-messages',
      history(),
    );
    expect(requests).toBe(1);
    expect(wire).toContain('the host is db.internal');
    expect(find(wire)).toEqual([]);
    expect(archived).toContain('the host is db.internal');
    expect(archived).toContain('for the summaries');
    expect(find(archived)).toEqual([]);
  });

  it('in the parsed texts and the wire form the summarizer gets', async () => {
    const codec = MESSAGE_CODECS['openai-chat'];
    const messages = history().map((raw, index) => ({ ...codec.parse(raw, index), id: `m${index}` }));
    const redacted = await redactMessages(messages as never, getDefaultRedactor());
    expect(redacted[2]!.text).toContain('for the summaries');
    expect(redacted[5]!.toolResults[0]!.output).toContain('the host is db.internal');
    expect(find(JSON.stringify(redacted))).toEqual([]);
  });

  it('in an array of wire messages redacted deep (the archived transcript, events)', () => {
    const out = redactDeep(history(), getDefaultRedactor());
    expect(JSON.stringify(out)).toContain('for the summaries');
    expect(find(JSON.stringify(out))).toEqual([]);
  });
});

describe('an archived original whose neighbour holds the other half', () => {
  const redact = getDefaultRedactor();
  const codec = MESSAGE_CODECS['openai-chat'];
  const items = history().map((raw, index) => ({
    entry: { parsed: codec.parse(raw, index) },
    id: `m${index}`,
    index,
  }));

  it.each([4, 5])('cleared tool result %i keeps no run of 8 of the token', (index) => {
    const cascade = {
      rewrites: [{ item: items[index], rewrite: { ref: `t${index}`, kind: 'cleared' }, toolName: 'read' }],
      folded: [],
    };
    const [artifact] = artifactsOf(cascade as never, 1, items as never);
    const text = redactJoined(artifact!.text, crossingSeams(artifact!.seams ?? [], redact), redact);
    expect(text).toContain(index === 4 ? 'deploy bot token' : 'the host is db.internal');
    expect(find(text)).toEqual([]);
  });
});
