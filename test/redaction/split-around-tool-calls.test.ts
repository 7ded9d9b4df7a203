import { describe, expect, it } from 'vitest';
import { MESSAGE_CODECS } from '../../src/core/messages/formats/detect-format.js';
import { redactMessages } from '../../src/core/preflight/cascade/summarize-remainder.js';
import { getDefaultRedactor, redactDeep } from '../../src/core/redaction/redactor.js';
import { useProviderTestServer } from '../fixtures/summarizers/use-provider-test-server.js';
import { compactToWireAndArchive } from './support/compact-to-wire-and-archive.js';
import { leakFinder } from './support/secret-shapes.js';

/**
 * review-86a: a secret split over two messages with a tool call between its halves (a user's
 * half, the assistant's call alone, the tool's result with the rest; or an assistant's text
 * ending in a half, with its call), and a secret with more than 256 characters on one side of
 * a seam (a PEM body): no run of 8 characters of either may leave.
 */

const startServer = useProviderTestServer();
const FILL = 'the deploy script reads the environment and rolls back on failure. '.repeat(12);
const OPENAI = 'sk-proj-Qx7Lm2Vb9Kt4Rw8Zn3Pc6Hd1Yf5Js0Ga2Ue7Tb4Nk9Mq3Wv';
const GITHUB = 'ghp_x7Kq2M9vTz4Lw8Rj3Nc6Pb1Yd5Hf0Gs2Ua7E';
const BODY = Array.from({ length: 12 }, (_, i) =>
  `MIIEvQIBADANBgkqhkiG9w0BAQEFAASC${i}Kcw${'ggSjAgEAAoIBAQC7'.repeat(2)}`.slice(0, 64),
).join('\n');
const PEM = `-----BEGIN PRIVATE KEY-----\n${BODY}\n-----END PRIVATE KEY-----`;
const CUT = PEM.length - 60;
// In a call's arguments between the halves of the GitHub token: sum-vN writes it in the join.
const AWS = 'AKIAQX7LM2VB9KT4RW8Z';
const find = leakFinder(
  [
    { kind: 'openai', secret: OPENAI, text: OPENAI },
    { kind: 'github', secret: GITHUB, text: GITHUB },
    { kind: 'aws', secret: AWS, text: AWS },
    ...BODY.split('\n').map((line) => ({ kind: 'pem', secret: line, text: line })),
  ],
  8,
);
const call = (id: string, args = '{}') => ({
  id,
  type: 'function',
  function: { name: 'read', arguments: args },
});

function history(): Record<string, unknown>[] {
  return [
    { role: 'user', content: `deploy the service. ${FILL}` },
    { role: 'user', content: `use my key ${OPENAI.slice(0, 22)}` },
    { role: 'assistant', content: null, tool_calls: [call('call_1')] },
    { role: 'tool', tool_call_id: 'call_1', content: `${OPENAI.slice(22)} for the summaries` },
    {
      role: 'assistant',
      content: `the bot token is ${GITHUB.slice(0, 16)}`,
      tool_calls: [call('call_2', `{"key":"${AWS}"}`)],
    },
    { role: 'tool', tool_call_id: 'call_2', content: `${GITHUB.slice(16)}\nthe host is db.internal.` },
    { role: 'user', content: `the signing key:\n${PEM.slice(0, CUT)}` },
    { role: 'user', content: `${PEM.slice(CUT)}\nplease rotate it. ${FILL}` },
    { role: 'assistant', content: `Deployed. ${FILL}` },
    { role: 'user', content: 'thanks' },
  ];
}

describe('a secret split around a tool call, or with over 256 characters on one side', () => {
  it('holds all three secrets split (the test can fail)', () => {
    expect(find(JSON.stringify(history())).length).toBeGreaterThanOrEqual(3);
  });

  it('leaves no run of 8 of them in the parsed texts the summarizer gets', async () => {
    const codec = MESSAGE_CODECS['openai-chat'];
    const messages = history().map((raw, index) => ({ ...codec.parse(raw, index), id: `m${index}` }));
    const redacted = await redactMessages(messages as never, getDefaultRedactor());
    expect(redacted[3]!.toolResults[0]!.output).toContain('for the summaries');
    expect(redacted[7]!.text).toContain('please rotate it');
    expect(find(JSON.stringify(redacted))).toEqual([]);
  });

  it('leaves none in an array of wire messages redacted deep', () => {
    const out = JSON.stringify(redactDeep(history(), getDefaultRedactor()));
    expect(out).toContain('for the summaries');
    expect(find(out)).toEqual([]);
  });

  // The summarizer's "new history" starts at #2 (#0 and #1 are pinned user turns): the half
  // in #1 is not sent, and the seam at the slice's start is cut where the slice is made.
  it('leaves none on the summarizer wire when the seam is at the start of the new history', async () => {
    const { wire } = await compactToWireAndArchive(startServer, 'split-around-calls', history());
    expect(wire).toContain('the host is db.internal');
    expect(find(wire)).toEqual([]);
  });
  it('leaves none in the archive (sum-vN and the originals) in that case', async () => {
    const { archived } = await compactToWireAndArchive(startServer, 'split-around-calls-archive', history());
    expect(archived).toContain('for the summaries');
    expect(archived).toContain('the host is db.internal');
    expect(find(archived)).toEqual([]);
    expect(archived).toContain('[5] result: <REDACTED>');
  });
});
