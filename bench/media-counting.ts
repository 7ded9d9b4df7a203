// What counting images, documents and encrypted reasoning costs the preflight: a cold count of
// 50,000 text-only chat messages (the media search runs on each), of 200 messages carrying a
// real-sized screenshot (1280x800, ~130 KB of base64: header read plus elision), and of 200
// reasoning items with 8 KB of encrypted content. Run: npx tsx bench/media-counting.ts

import { tokenCounterFor } from '../src/core/counting/token-counter.js';
import { openaiChatCodec } from '../src/core/messages/formats/openai-chat.js';
import { openaiResponsesCodec } from '../src/core/messages/formats/openai-responses.js';
import type { CompactMessage } from '../src/core/messages/message.js';
import { pngBytes } from '../test/support/test-images.js';

const counter = tokenCounterFor('gpt-4o');
const parse = (codec: typeof openaiChatCodec, raw: unknown, i: number): CompactMessage => ({
  ...codec.parse(raw, i),
  id: `m${i}`,
  index: i,
});

function time(label: string, messages: CompactMessage[]): void {
  const start = performance.now();
  let total = 0;
  for (const m of messages) total += counter.countMessage(m);
  const ms = performance.now() - start;
  console.log(
    `${label}: ${messages.length} messages, ${total} tokens, ${ms.toFixed(0)} ms (${((1000 * ms) / messages.length).toFixed(1)} us/message)`,
  );
}

counter.countText('warm up the encoding');
const text = Array.from({ length: 50_000 }, (_, i) =>
  parse(
    openaiChatCodec,
    { role: i % 2 ? 'assistant' : 'user', content: `message ${i}: fix src/app/file-${i % 97}.ts line ${i}` },
    i,
  ),
);
time('text only', text);

const screenshot = `data:image/png;base64,${pngBytes(1280, 800, true).toString('base64')}`;
const images = Array.from({ length: 200 }, (_, i) =>
  parse(
    openaiResponsesCodec,
    {
      type: 'computer_call_output',
      call_id: `call_${i}`,
      output: { type: 'computer_screenshot', image_url: screenshot },
    },
    i,
  ),
);
time('screenshots', images);

const reasoning = Array.from({ length: 200 }, (_, i) =>
  parse(
    openaiResponsesCodec,
    { type: 'reasoning', id: `rs_${i}`, summary: [], encrypted_content: 'gAAAAB'.repeat(1400) },
    i,
  ),
);
time('encrypted reasoning', reasoning);
