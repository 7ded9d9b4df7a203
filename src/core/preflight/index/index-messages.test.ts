/**
 * Issue 47 point 2: a message of megabytes was stringified and hashed in one block (~140 ms for
 * 10 MB) when a cold call indexed it; the sliced index hashes it a piece at a time.
 */
import { describe, expect, it } from 'vitest';
import { openaiChatCodec } from '../../messages/formats/openai-chat.js';
import { MessageIndex } from '../../messages/message-index.js';
import { TimeSlice } from '../../time-slice.js';
import { indexMessagesInSlices } from './index-messages.js';
import { IndexedHistories } from './index-request.js';

describe('indexing a message of megabytes in slices', () => {
  it('gives the loop a turn before the message is parsed, with the same entry as at once', async () => {
    const big = { role: 'user', content: 'GET /api/v1/users?id=42 200 took 12ms "ok"\n'.repeat(60_000) };
    const history = [big, { role: 'assistant', content: 'read' }];
    // The parse follows the hash: a turn of the loop before the big message's parse (the first
    // of the call) means its hash did not run in one stretch with it.
    let turned = false;
    let turnedBeforeParse: boolean | undefined;
    const codec = {
      ...openaiChatCodec,
      parse(raw: unknown, index: number) {
        if (raw === big) turnedBeforeParse = turned;
        return openaiChatCodec.parse(raw, index);
      },
    };
    setImmediate(() => {
      turned = true;
    });
    const deps = { histories: new IndexedHistories(), index: new MessageIndex() };
    const input = { key: 's', messages: history, codec, policy: { repairInput: false } };
    const { indexed } = await indexMessagesInSlices(deps, input, new TimeSlice({ sliceMs: 0 }));
    expect(turnedBeforeParse).toBe(true);
    const atOnce = new MessageIndex().entry(big, 0, openaiChatCodec);
    const entry = indexed.items.at(0)!.entry;
    expect([entry.hash, entry.contentKey, entry.contentCheck, entry.contentLength]).toEqual([
      atOnce.hash,
      atOnce.contentKey,
      atOnce.contentCheck,
      atOnce.contentLength,
    ]);
  });
});
