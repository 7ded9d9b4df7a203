/**
 * Issue 37 point 7: audio counted by duration, a file by id by a stated estimate reported in
 * an event, and a content part of a type nobody knows rejected with its index.
 */
import { describe, expect, it } from 'vitest';
import { isCompactError } from '../errors.js';
import type { AnyCompactEvent } from '../events/events.js';
import { CompactManager } from '../manager/compact-manager.js';
import { openaiChatCodec } from '../messages/formats/openai-chat.js';
import { AUDIO_TOKENS_PER_SECOND, audioTokens, FILE_REFERENCE_TOKENS, wavSeconds } from './count-media.js';

/** A PCM WAV file of `seconds` of silence (16 kHz, mono, 16-bit). */
function wav(seconds: number): string {
  const rate = 16_000;
  const data = rate * 2 * seconds;
  const bytes = Buffer.alloc(44 + data);
  bytes.write('RIFF', 0);
  bytes.writeUInt32LE(36 + data, 4);
  bytes.write('WAVEfmt ', 8);
  bytes.writeUInt32LE(16, 16);
  bytes.writeUInt16LE(1, 20);
  bytes.writeUInt16LE(1, 22);
  bytes.writeUInt32LE(rate, 24);
  bytes.writeUInt32LE(rate * 2, 28);
  bytes.writeUInt16LE(2, 32);
  bytes.writeUInt16LE(16, 34);
  bytes.write('data', 36);
  bytes.writeUInt32LE(data, 40);
  return bytes.toString('base64');
}

const question = (extra: unknown[] = []) => [
  { role: 'system', content: 'You answer questions about recordings and documents.' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'What does the caller ask for, and is it in the contract?' },
      { type: 'input_audio', input_audio: { data: wav(30), format: 'wav' } },
      { type: 'file', file: { file_id: 'file-6F2ksmvXxt4VdoqmHRw6kL' } },
      ...extra,
    ],
  },
];

describe('audio by duration', () => {
  it('reads a WAV header: 30 s of 16 kHz audio is 300 tokens, from the header alone', () => {
    const data = wav(30);
    expect(wavSeconds(Buffer.from(data, 'base64'))).toBe(30);
    expect(audioTokens({ data, format: 'wav' })).toBe(30 * AUDIO_TOKENS_PER_SECOND);
    // A data URL is the same audio.
    expect(audioTokens({ data: `data:audio/wav;base64,${data}` })).toBe(300);
  });

  it('compressed audio: 128 kbit/s assumed (60 s of mp3 = 960,000 bytes = 600 tokens)', () => {
    const mp3 = Buffer.alloc(960_000, 0x55).toString('base64');
    expect(audioTokens({ data: mp3, format: 'mp3' })).toBe(600);
  });
});

describe('a message with audio, a file by id and text', () => {
  it('fits a 6,000-token window; the file estimate is stated in one compact.warning', async () => {
    const events: AnyCompactEvent[] = [];
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6000,
      exporters: [{ name: 'collect', export: async (batch) => void events.push(...batch) }],
    });
    const estimate = manager.estimate(question());
    // 300 audio + 3,000 file + a few dozen of text: far below the 15,089 of the old default.
    expect(estimate.total).toBeGreaterThan(300 + FILE_REFERENCE_TOKENS);
    expect(estimate.total).toBeLessThan(300 + FILE_REFERENCE_TOKENS + 120);
    const result = await manager.compact('media', question(), { force: true });
    expect(result.tokensAfter).toBeLessThanOrEqual(6000);
    // A later call with one more message does not report the same file again.
    await manager.preflight('media', [...question(), { role: 'assistant', content: 'Checking.' }]);
    await manager.shutdown();
    const warnings = events.filter((e) => e.name === 'compact.warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.properties).toMatchObject({
      code: 'media_estimate',
      context: { index: 1, fileId: 'file-6F2ksmvXxt4VdoqmHRw6kL', tokens: FILE_REFERENCE_TOKENS },
    });
  });

  it('an unknown part type is an invalid_messages error naming messages[1].content[3]', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 6000 });
    const history = question([{ type: 'hologram', hologram: { id: 'h1' } }]);
    const error = await manager.compact('bad', history).catch((e: unknown) => e);
    expect(isCompactError(error, 'invalid_messages')).toBe(true);
    expect((error as Error).message).toMatch(
      /^messages\[1\]\.content\[3\]: unknown content part type "hologram"/,
    );
    expect((error as { issues: unknown[] }).issues[0]).toMatchObject({
      path: ['messages', 1, 'content', 3, 'type'],
    });
    // The caller's messages are untouched, and known parts parse.
    expect(history[1]!.content).toHaveLength(4);
    expect(() => openaiChatCodec.parse(question()[1], 1)).not.toThrow();
    await manager.shutdown();
  });
});
