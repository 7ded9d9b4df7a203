import { describe, expect, it } from 'vitest';
import { pdfBytes, pngBytes, pngDataUrl } from '../../../test/support/test-images.js';
import { anthropicCodec } from '../messages/formats/anthropic.js';
import { elideMedia, mediaParts } from '../messages/formats/media-parts.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import { openaiChatCodec } from '../messages/formats/openai-chat.js';
import { openaiResponsesCodec } from '../messages/formats/openai-responses.js';
import type { CompactMessage } from '../messages/message.js';
import {
  ANTHROPIC_IMAGE_RULE,
  DEFAULT_IMAGE_DIMENSIONS,
  GEMINI_IMAGE_RULE,
  imageDimensions,
  imageRuleFor,
  imageTokens,
  OPENAI_TILE_RULE,
} from './count-image.js';
import {
  DEFAULT_DOCUMENT_PAGES,
  ENCRYPTED_CHARS_PER_TOKEN,
  PDF_PAGE_TOKENS,
  pdfPageCount,
} from './count-media.js';
import { tokenCounterFor } from './token-counter.js';

const SCREENSHOT = pngDataUrl(1280, 800);

function parse(codec: MessageCodec, raw: unknown): CompactMessage {
  return { ...codec.parse(raw, 0), id: 'm', index: 0 };
}

describe('image formulas', () => {
  it('counts a 1280x800 screenshot as OpenAI (high 1,105, low 85) and Anthropic (1,366) charge it', () => {
    const size = { width: 1280, height: 800 };
    expect(imageTokens(OPENAI_TILE_RULE, size, 'high')).toBe(1105);
    expect(imageTokens(OPENAI_TILE_RULE, size, 'auto')).toBe(1105);
    expect(imageTokens(OPENAI_TILE_RULE, size, 'low')).toBe(85);
    expect(imageTokens(ANTHROPIC_IMAGE_RULE, size)).toBe(1366);
  });

  it("follows OpenAI's published tile examples", () => {
    // 1024x1024 high: shortest side to 768, 4 tiles: 765. 2048x4096: fit 1024x2048, then 768x1536, 6 tiles: 1105.
    expect(imageTokens(OPENAI_TILE_RULE, { width: 1024, height: 1024 }, 'high')).toBe(765);
    expect(imageTokens(OPENAI_TILE_RULE, { width: 2048, height: 4096 }, 'high')).toBe(1105);
    expect(imageTokens(OPENAI_TILE_RULE, { width: 4096, height: 8192 }, 'low')).toBe(85);
    // Patch rule (gpt-4.1-mini x1.62): 1024x1024 is 1,024 patches; 1800x2400 is scaled to 1,452.
    expect(imageTokens(imageRuleFor('gpt-4.1-mini'), { width: 1024, height: 1024 })).toBe(
      Math.ceil(1024 * 1.62),
    );
    expect(imageTokens({ kind: 'patches', multiplier: 1 }, { width: 1800, height: 2400 })).toBe(1452);
  });

  it('scales Anthropic images to the 1,568 long edge and caps them at 1,600 tokens', () => {
    expect(imageTokens(ANTHROPIC_IMAGE_RULE, { width: 200, height: 200 })).toBe(54);
    expect(imageTokens(ANTHROPIC_IMAGE_RULE, { width: 1092, height: 1092 })).toBe(1590);
    expect(imageTokens(ANTHROPIC_IMAGE_RULE, { width: 4000, height: 3000 })).toBe(1600);
    expect(imageTokens(ANTHROPIC_IMAGE_RULE, { width: 3136, height: 200 })).toBe(
      Math.ceil((1568 * 100) / 750),
    );
  });

  it('counts Gemini images as 258 per 768-pixel tile', () => {
    expect(imageTokens(GEMINI_IMAGE_RULE, { width: 384, height: 384 })).toBe(258);
    expect(imageTokens(GEMINI_IMAGE_RULE, { width: 1280, height: 800 })).toBe(258 * 4);
  });

  it('picks the rule by model', () => {
    expect(imageRuleFor('claude-sonnet-4-5')).toBe(ANTHROPIC_IMAGE_RULE);
    expect(imageRuleFor('models/gemini-2.5-pro')).toBe(GEMINI_IMAGE_RULE);
    expect(imageRuleFor('gpt-4o')).toBe(OPENAI_TILE_RULE);
    expect(imageRuleFor('gpt-5')).toEqual({ kind: 'tiles', base: 70, perTile: 140 });
    expect(imageRuleFor('gpt-4o-mini-2024-07-18')).toEqual({ kind: 'tiles', base: 2833, perTile: 5667 });
    expect(imageRuleFor('llama3.2-vision:11b')).toBe(OPENAI_TILE_RULE);
  });

  it('reads dimensions from base64, data URLs and a truncated header; not from garbage', () => {
    expect(imageDimensions(SCREENSHOT)).toEqual({ width: 1280, height: 800 });
    expect(imageDimensions(pngBytes(33, 7).toString('base64'))).toEqual({ width: 33, height: 7 });
    expect(imageDimensions(pngBytes(640, 480).subarray(0, 40).toString('base64'))).toEqual({
      width: 640,
      height: 480,
    });
    expect(imageDimensions('data:image/png;base64,bm90IGFuIGltYWdl')).toBeUndefined();
    expect(imageDimensions('')).toBeUndefined();
  });
});

describe('counting messages with images, documents and encrypted reasoning', () => {
  const gpt4o = tokenCounterFor('gpt-4o');
  const claude = tokenCounterFor('claude-sonnet-4-5');

  it('OpenAI Chat: image_url parts by detail level', () => {
    const text = { type: 'text', text: 'What is on this screen?' };
    // The same text as the parts' text (the part is marked `[image_url]` in the message text).
    const base = gpt4o.countMessage(
      parse(openaiChatCodec, { role: 'user', content: `${text.text}\n[image_url]` }),
    );
    const high = {
      role: 'user',
      content: [text, { type: 'image_url', image_url: { url: SCREENSHOT, detail: 'high' } }],
    };
    const low = {
      role: 'user',
      content: [text, { type: 'image_url', image_url: { url: SCREENSHOT, detail: 'low' } }],
    };
    expect(gpt4o.countMessage(parse(openaiChatCodec, high)) - base).toBe(1105);
    expect(gpt4o.countMessage(parse(openaiChatCodec, low)) - base).toBe(85);
  });

  it('Anthropic: image blocks and images inside tool results, never multiplied by the estimate margin', () => {
    const data = SCREENSHOT.slice(SCREENSHOT.indexOf(',') + 1);
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data } };
    const plain = { role: 'user', content: [{ type: 'text', text: 'Look.' }] };
    const withImage = { role: 'user', content: [{ type: 'text', text: 'Look.' }, image] };
    const result = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: [image, image] }],
    };
    const base = claude.countMessage(parse(anthropicCodec, plain));
    const counted = claude.countMessage(parse(anthropicCodec, withImage));
    expect(counted - base).toBeGreaterThanOrEqual(1366);
    expect(counted - base).toBeLessThan(1366 + 10);
    expect(claude.countMessage(parse(anthropicCodec, result))).toBeGreaterThan(2 * 1366);
  });

  it('Responses: input_image, a computer screenshot (its base64 never counted as text) and a URL-only image', () => {
    const screenshot = {
      type: 'computer_call_output',
      call_id: 'call_0',
      output: { type: 'computer_screenshot', image_url: SCREENSHOT },
    };
    const tokens = gpt4o.countMessage(parse(openaiResponsesCodec, screenshot));
    expect(tokens).toBeGreaterThanOrEqual(1105);
    expect(tokens).toBeLessThan(1105 + 40);
    const byUrl = {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }],
    };
    const urlTokens = gpt4o.countMessage(parse(openaiResponsesCodec, byUrl));
    expect(urlTokens).toBeGreaterThanOrEqual(imageTokens(OPENAI_TILE_RULE, DEFAULT_IMAGE_DIMENSIONS.tiles));
    expect(imageTokens(OPENAI_TILE_RULE, undefined)).toBe(85 + 8 * 170);
    expect(imageTokens(ANTHROPIC_IMAGE_RULE, undefined)).toBe(1600);
  });

  it('documents: PDF pages, text sources and URL-only files', () => {
    const pdf = pdfBytes(3);
    expect(pdfPageCount(pdf)).toBe(3);
    const doc = (source: Record<string, unknown>) => ({
      role: 'user',
      content: [{ type: 'document', source }],
    });
    const pdfMessage = doc({ type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') });
    expect(claude.countMessage(parse(anthropicCodec, pdfMessage))).toBeGreaterThanOrEqual(
      3 * PDF_PAGE_TOKENS,
    );
    const body = 'The quick brown fox. '.repeat(200);
    const textDoc = claude.countMessage(
      parse(anthropicCodec, doc({ type: 'text', media_type: 'text/plain', data: body })),
    );
    expect(textDoc).toBeGreaterThanOrEqual(claude.countText(body));
    expect(textDoc).toBeLessThan(claude.countText(body) + 20);
    const byUrl = claude.countMessage(
      parse(anthropicCodec, doc({ type: 'url', url: 'https://example.com/a.pdf' })),
    );
    expect(byUrl).toBeGreaterThanOrEqual(DEFAULT_DOCUMENT_PAGES * PDF_PAGE_TOKENS);
    const chatFile = {
      role: 'user',
      content: [
        {
          type: 'file',
          file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${pdf.toString('base64')}` },
        },
      ],
    };
    expect(gpt4o.countMessage(parse(openaiChatCodec, chatFile))).toBeGreaterThanOrEqual(3 * PDF_PAGE_TOKENS);
  });

  it('encrypted reasoning: Responses encrypted_content and Anthropic redacted_thinking', () => {
    const payload = 'gAAAAB'.repeat(1000);
    const expected = Math.ceil(payload.length / ENCRYPTED_CHARS_PER_TOKEN);
    const reasoning = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: payload };
    const plainReasoning = { type: 'reasoning', id: 'rs_1', summary: [] };
    expect(
      gpt4o.countMessage(parse(openaiResponsesCodec, reasoning)) -
        gpt4o.countMessage(parse(openaiResponsesCodec, plainReasoning)),
    ).toBe(expected);
    const redacted = { role: 'assistant', content: [{ type: 'redacted_thinking', data: payload }] };
    expect(claude.countMessage(parse(anthropicCodec, redacted))).toBeGreaterThanOrEqual(expected);
    const signed = {
      role: 'assistant',
      content: [{ type: 'thinking', thinking: 'Plan: read a.ts', signature: payload }],
    };
    expect(claude.countMessage(parse(anthropicCodec, signed))).toBeLessThan(40);
  });

  it('an image generation result is an image; tool arguments that look like images are not', () => {
    const generated = {
      type: 'image_generation_call',
      id: 'ig_1',
      status: 'completed',
      result: pngBytes(1024, 1024, true).toString('base64'),
    };
    const tokens = gpt4o.countMessage(parse(openaiResponsesCodec, generated));
    expect(tokens).toBeGreaterThanOrEqual(765);
    expect(tokens).toBeLessThan(765 + 60);
    const call = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_0', name: 'draw', input: { type: 'image', url: 'x' } }],
    };
    expect(mediaParts(call)).toEqual([]);
  });

  it('elides exactly the payloads found, wherever the structure put them', () => {
    const payload = 'QUJD'.repeat(300);
    const parts = mediaParts({ type: 'reasoning', encrypted_content: payload });
    expect(elideMedia(`{"encrypted_content":"${payload}","x":"${payload}"}`, parts)).toBe(
      '{"encrypted_content":"[data]","x":"[data]"}',
    );
    expect(elideMedia('unrelated text', parts)).toBe('unrelated text');
    expect(elideMedia(payload, [])).toBe(payload);
  });

  it('an unknown model counts images by the message format', () => {
    const data = SCREENSHOT.slice(SCREENSHOT.indexOf(',') + 1);
    const block = { type: 'image', source: { type: 'base64', media_type: 'image/png', data } };
    const proxy = tokenCounterFor('my-claude-proxy');
    const tokens = proxy.countMessage(parse(anthropicCodec, { role: 'user', content: [block] }));
    expect(tokens).toBeGreaterThanOrEqual(1366);
    expect(tokens).toBeLessThan(1366 + 20);
    const chat = { role: 'user', content: [{ type: 'image_url', image_url: { url: SCREENSHOT } }] };
    expect(proxy.countMessage(parse(openaiChatCodec, chat))).toBeLessThan(1105 + 20);
  });

  it('finds nothing in text-only messages and does not descend into meta', () => {
    expect(mediaParts({ role: 'user', content: 'hi' })).toEqual([]);
    expect(mediaParts({ role: 'user', content: 'hi', meta: { image: { type: 'image' } } })).toEqual([]);
  });

  it('a data URL in text the caller wrote is text; one inside a screenshot object is the image', () => {
    const dataUrl = pngDataUrl(64, 64);
    const asText = { role: 'tool', tool_call_id: 'call_0', content: `screenshot: ${dataUrl}` };
    expect(gpt4o.countMessage(parse(openaiChatCodec, asText))).toBeGreaterThan(gpt4o.countText(dataUrl));
    const asObject = {
      type: 'function_call_output',
      call_id: 'call_0',
      output: [
        { type: 'input_image', image_url: dataUrl },
        { type: 'computer_screenshot', image_url: dataUrl },
      ],
    };
    expect(gpt4o.countMessage(parse(openaiResponsesCodec, asObject))).toBeLessThan(2 * 255 + 40);
  });

  it('stays fast on a 10 MB inline screenshot', () => {
    const big = { type: 'computer_screenshot', image_url: `data:image/png;base64,${'A'.repeat(10_000_000)}` };
    const message = { type: 'computer_call_output', call_id: 'call_0', output: big };
    expect(gpt4o.countMessage(parse(openaiResponsesCodec, message))).toBeLessThan(85 + 8 * 170 + 40);
  });
});
