/**
 * Issue 48 point 4: an unknown content part is the same typed error in every format (exit 2,
 * naming the message index and part); `--format` on messages of another format names the
 * format found; an estimate says `exact: false` whenever a part is estimated.
 */
import { describe, expect, it } from 'vitest';
import { cli, useTempFiles } from '../../test/support/cli-fixtures.js';
import { CompactManager } from '../core/manager/compact-manager.js';
import { EXIT_CODES } from './run-cli.js';

const temp = useTempFiles();
const hologram = { type: 'hologram', data: 'x'.repeat(20_000) };

describe('an unknown content part', () => {
  it.each([
    ['anthropic', [{ role: 'user', content: [{ type: 'text', text: 'look' }, hologram] }]],
    ['openai-chat', [{ role: 'user', content: [{ type: 'text', text: 'look' }, hologram] }]],
  ])('%s: exit 2, one line naming messages[0].content[1] and the type', async (format, messages) => {
    const file = await temp.file(`hologram-${format}.json`, messages);
    const run = await cli(['estimate', file, '--format', format]);
    expect(run.code).toBe(EXIT_CODES.badInput);
    expect(run.stderr).toMatch(/messages\[0\]\.content\[1\]: unknown content (part|block) type "hologram"/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stdout).toBe('');
  });

  it('the library raises the same typed error for an Anthropic block', () => {
    const manager = new CompactManager({ maxContextTokens: 10_000 });
    expect(() => manager.estimate([{ role: 'user', content: [hologram] }], { format: 'anthropic' })).toThrow(
      expect.objectContaining({ code: 'invalid_messages' }),
    );
  });
});

describe('--format on messages of another format', () => {
  it('names the format it found', async () => {
    const chat = [
      { role: 'user', content: 'read the file' },
      { role: 'assistant', content: ['a', 'b'] },
    ];
    const file = await temp.file('chat.json', chat);
    const run = await cli(['estimate', file, '--format', 'anthropic']);
    expect(run.code).toBe(EXIT_CODES.badInput);
    expect(run.stderr).toContain('the messages look like openai-chat, not anthropic');
  });
});

describe('exact', () => {
  const pixel =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  it.each([
    ['openai-chat', { type: 'image_url', image_url: { url: `data:image/png;base64,${pixel}` } }],
    ['anthropic', { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pixel } }],
  ])('%s: false when an image is estimated, true for text alone', async (format, image) => {
    const text = await temp.file(`text-${format}.json`, [{ role: 'user', content: 'hello' }]);
    const withImage = await temp.file(`image-${format}.json`, [
      { role: 'user', content: [{ type: 'text', text: 'what is this?' }, image] },
    ]);
    const plain = JSON.parse((await cli(['estimate', text, '--format', format])).stdout);
    const mixed = JSON.parse((await cli(['estimate', withImage, '--format', format])).stdout);
    expect(plain.exact).toBe(true);
    expect(mixed.exact).toBe(false);
  });
});
