import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProviderTestServer, startProviderTestServer } from './provider-test-server.js';

let server: ProviderTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const toolCall = { id: 'call_weather', name: 'get_weather', arguments: { city: 'Paris' } };

describe('startProviderTestServer with the official SDKs', () => {
  it('Responses API, non-streaming: text, function calls and usage parse in the openai SDK', async () => {
    server = await startProviderTestServer({
      handler: [{ text: 'Checking.', toolCalls: [toolCall], usage: { inputTokens: 11, outputTokens: 7 } }],
    });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
    const response = await client.responses.create({
      model: 'gpt-4.1',
      input: 'weather?',
      instructions: 'be brief',
    });
    expect(response.output_text).toBe('Checking.');
    expect(response.output[1]).toMatchObject({
      type: 'function_call',
      call_id: 'call_weather',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
    expect(response.usage).toMatchObject({ input_tokens: 11, output_tokens: 7, total_tokens: 18 });
    expect(response.instructions).toBe('be brief');
    expect(server.requests[0]).toMatchObject({
      path: '/v1/responses',
      endpoint: 'openai-responses',
      stream: false,
    });
  });

  it('Responses API, streaming: events arrive in order with sequence numbers and the final response', async () => {
    server = await startProviderTestServer({
      handler: () => ({ text: 'Hello from the stream, a long enough text.', toolCalls: [toolCall] }),
    });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
    const stream = await client.responses.create({ model: 'gpt-4.1', input: 'hi', stream: true });
    const types: string[] = [];
    const sequence: number[] = [];
    let text = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      sequence.push(event.sequence_number);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') final = event.response;
    }
    expect(text).toBe('Hello from the stream, a long enough text.');
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.function_call_arguments.done');
    expect(types.at(-1)).toBe('response.completed');
    expect(sequence).toEqual(sequence.map((_, i) => i));
    expect(final?.output).toHaveLength(2);
    expect(server.requests[0]!.stream).toBe(true);
  });

  it('Responses API: refusals and length stops are written as the API does', async () => {
    server = await startProviderTestServer({
      handler: [
        { refusal: 'No.' },
        { text: 'cut', finishReason: 'length' },
        { text: 'x', finishReason: 'content_filter' },
      ],
    });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
    const refused = await client.responses.create({ model: 'm', input: 'x' });
    expect(refused.output[0]).toMatchObject({
      type: 'message',
      content: [{ type: 'refusal', refusal: 'No.' }],
    });
    const cut = await client.responses.create({ model: 'm', input: 'x' });
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    const filtered = await client.responses.create({ model: 'm', input: 'x', stream: true });
    const last: string[] = [];
    for await (const event of filtered) last.push(event.type);
    expect(last.at(-1)).toBe('response.incomplete');
  });

  it('Chat Completions streaming with tool calls and usage', async () => {
    server = await startProviderTestServer({
      handler: [{ text: 'Let me check the weather for you.', toolCalls: [toolCall] }],
    });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather' }],
      stream_options: { include_usage: true },
    });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0]!.message.content).toBe('Let me check the weather for you.');
    expect(completion.choices[0]!.message.tool_calls?.[0]).toMatchObject({
      id: 'call_weather',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(completion.choices[0]!.finish_reason).toBe('tool_calls');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('Chat Completions streaming refusal', async () => {
    server = await startProviderTestServer({ handler: [{ refusal: 'Cannot do that.' }] });
    const client = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
    const completion = await client.chat.completions
      .stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .finalChatCompletion();
    expect(completion.choices[0]!.message.refusal).toBe('Cannot do that.');
  });

  it('Anthropic Messages, non-streaming and streaming, with tool_use blocks', async () => {
    server = await startProviderTestServer({
      handler: () => ({ text: 'Looking it up now, one moment.', toolCalls: [toolCall] }),
    });
    const client = new Anthropic({ baseURL: server.anthropicBaseURL, apiKey: 'sk-ant', maxRetries: 0 });
    const message = await client.messages.create({
      model: 'claude-test-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'w' }],
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'text', text: 'Looking it up now, one moment.' },
      { type: 'tool_use', id: 'call_weather', name: 'get_weather', input: { city: 'Paris' } },
    ]);
    const streamed = await client.messages
      .stream({ model: 'claude-test-model', max_tokens: 100, messages: [{ role: 'user', content: 'w' }] })
      .finalMessage();
    expect(streamed.content).toEqual(message.content);
    expect(streamed.stop_reason).toBe('tool_use');
    expect(streamed.usage.output_tokens).toBe(message.usage.output_tokens);
  });

  it('answers errors in each provider format, 404 for unknown paths, and records every request', async () => {
    server = await startProviderTestServer({
      handler: (request) =>
        request.endpoint === 'other' ? undefined : { error: { status: 400, message: 'bad input' } },
    });
    const openai = new OpenAI({ baseURL: server.openaiBaseURL, apiKey: 'sk-test', maxRetries: 0 });
    const anthropic = new Anthropic({ baseURL: server.anthropicBaseURL, apiKey: 'sk-ant', maxRetries: 0 });
    await expect(openai.chat.completions.create({ model: 'm', messages: [] })).rejects.toMatchObject({
      status: 400,
      error: { message: 'bad input', type: 'invalid_request_error' },
    });
    await expect(
      anthropic.messages.create({ model: 'm', max_tokens: 1, messages: [] }),
    ).rejects.toMatchObject({
      status: 400,
      error: { type: 'error', error: { type: 'invalid_request_error', message: 'bad input' } },
    });
    const response = await fetch(`${server.url}/v1/unknown`, { method: 'POST', body: 'plain' });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { message: 'no route for POST /v1/unknown', type: 'not_found' },
    });
    expect(server.requests.map((r) => r.endpoint)).toEqual(['openai-chat', 'anthropic-messages', 'other']);
    expect(server.requests[2]).toMatchObject({ body: undefined, rawBody: 'plain', seq: 3 });
  });
});
