/**
 * A Chat content part without its required field (a text part with no `text`, an `image_url`
 * part with no `url`): the provider refuses it, and the library counted it as nothing (or as
 * the largest image) and sent it on. Now an `invalid_messages` error naming the message and
 * the field, like the Anthropic blocks' and the tool calls' own checks.
 */
import { describe, expect, it } from 'vitest';
import { compactMessages } from '../../src/core/compact-messages.js';
import { isCompactError } from '../../src/core/errors.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';

/**
 * Every entry point (preflight, estimate, compactMessages) refuses `messages` with
 * `invalid_messages` naming `messages[1].<field>`, its issue's path split the same way.
 */
async function expectRefused(messages: unknown[], field: string): Promise<void> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
  const calls = [
    () => manager.preflight('s', messages as never),
    async () => manager.estimate(messages as never),
    () => compactMessages(messages as never, { model: 'gpt-4o', maxTokens: 8_000 }),
  ];
  for (const call of calls) {
    const error = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCompactError(error, 'invalid_messages')).toBe(true);
    expect((error as Error).message).toMatch(
      new RegExp(`^messages\\[1\\]\\.${field.replaceAll('.', '\\.')}: `),
    );
    expect((error as { issues: { path: unknown[] }[] }).issues[0]!.path).toEqual([
      'messages',
      1,
      ...field.split('.'),
    ]);
  }
  await manager.shutdown();
}

const cases: { name: string; part: unknown; field: string }[] = [
  { name: 'a text part without text', part: { type: 'text' }, field: 'content.1.text' },
  { name: 'a text part whose text is null', part: { type: 'text', text: null }, field: 'content.1.text' },
  {
    name: 'an image_url part with image_url {}',
    part: { type: 'image_url', image_url: {} },
    field: 'content.1.image_url.url',
  },
  {
    name: 'an image_url part without image_url',
    part: { type: 'image_url' },
    field: 'content.1.image_url.url',
  },
];

describe('Chat content parts missing their required field', () => {
  for (const { name, part, field } of cases) {
    it(`${name}: invalid_messages naming messages[1].${field}`, async () => {
      const messages = [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, part] },
      ];
      await expectRefused(messages, field);
    });
  }

  it('parts with their fields pass (an empty text too)', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: '' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
        ],
      },
    ];
    await expect(manager.preflight('s', messages as never)).resolves.toEqual(messages);
    await manager.shutdown();
  });
});

describe('Anthropic image and document blocks without a source', () => {
  for (const block of [
    { type: 'image' },
    { type: 'image', source: {} },
    { type: 'document', source: null },
  ]) {
    it(`${JSON.stringify(block)}: invalid_messages naming messages[0].content.1.source`, async () => {
      const messages = [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, block] }];
      const manager = new CompactManager({ model: 'claude-sonnet-4-6', maxContextTokens: 8_000 });
      const error = await manager.preflight('s', messages as never).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isCompactError(error, 'invalid_messages')).toBe(true);
      expect((error as Error).message).toMatch(/^messages\[0\]\.content\.1\.source: /);
      await manager.shutdown();
    });
  }
});

/**
 * The same for OpenAI Responses (and Agents SDK) message items: a part without its required
 * field, a part that is not an object, and an unknown part type were sent on as they came
 * (the provider refuses them), or counted as a document of unknown size: `{ type: 'input_file' }`
 * alone made an 8k window fail with insufficient_budget.
 */
const responsesCases: { name: string; part: unknown; field: string }[] = [
  { name: 'an input_text part without text', part: { type: 'input_text' }, field: 'content.1.text' },
  {
    name: 'an output_text part whose text is 5',
    part: { type: 'output_text', text: 5 },
    field: 'content.1.text',
  },
  { name: 'a refusal part without refusal', part: { type: 'refusal' }, field: 'content.1.refusal' },
  {
    name: 'an input_image part with no image',
    part: { type: 'input_image', detail: 'low' },
    field: 'content.1.image_url',
  },
  {
    name: 'an input_file part with no file',
    part: { type: 'input_file', filename: 'a.pdf' },
    field: 'content.1.file_id',
  },
  { name: 'a null part', part: null, field: 'content.1' },
  { name: 'a part without type', part: { text: 'hi' }, field: 'content.1.type' },
  { name: 'a part of an unknown type', part: { type: 'input_video', url: 'x' }, field: 'content.1.type' },
];

describe('Responses content parts missing their required field', () => {
  for (const { name, part, field } of responsesCases) {
    it(`${name}: invalid_messages naming messages[1].${field}`, async () => {
      const messages = [
        { type: 'message', role: 'developer', content: 'Be brief.' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, part] },
      ];
      await expectRefused(messages, field);
    });
  }

  it('Responses and Agents SDK parts with their fields pass', async () => {
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8_000 });
    const messages = [
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: '' },
          { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
          { type: 'input_image', file_id: 'file-1' },
          { type: 'input_file', file_id: 'file-2' },
        ],
      },
      { role: 'user', content: [{ type: 'input_image', image: 'https://example.com/b.png' }] },
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: 'A cat.' },
          { type: 'refusal', refusal: 'No more.' },
        ],
      },
    ];
    await expect(manager.preflight('s', messages as never)).resolves.toEqual(messages);
    await manager.shutdown();
  });
});
