/**
 * Request bodies a client compressed (`Content-Encoding: gzip`, `deflate`, `br`) are decoded,
 * compacted and forwarded uncompressed; one the proxy leaves as it is goes compressed as sent. A
 * body that decoded would pass the body limit (a zip bomb) is a 413 with nothing sent upstream,
 * and one not valid in its coding a 400, each in the provider's error shape. A zstd body (made by
 * the `zstd` tool, vendored) is decoded where Node's zlib has zstd, else refused with a 415 that
 * names the coding.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const CODINGS = {
  gzip: promisify(zlib.gzip),
  deflate: promisify(zlib.deflate),
  br: promisify(zlib.brotliCompress),
} as const;

/** A Chat conversation `name` of `notes` notes of ~700 words each (12 are over the 8,000-token window). */
function chatBody(notes: number, name = 'a'): string {
  const messages = Array.from({ length: notes }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `${name} note ${i}: ${Array.from({ length: 700 }, (_, k) => `word${(k * 7 + i) % 97}`).join(' ')}`,
  }));
  return JSON.stringify({ model: 'gpt-4o', messages: [...messages, { role: 'user', content: 'go on' }] });
}

async function post(url: string, body: Buffer, encoding: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'content-encoding': encoding },
    body,
  });
  return { status: response.status, body: await response.json() };
}

describe('compressed request bodies', () => {
  it('are decoded and compacted (gzip, deflate, br), sent uncompressed', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, provider, logs } = running;
    for (const [coding, encode] of Object.entries(CODINGS)) {
      const body = chatBody(24, coding);
      const answer = await post(`${proxy.url}/v1/chat/completions`, await encode(body), coding);
      expect(answer.status).toBe(200);
      const received = provider.requests.at(-1)!;
      expect(received.headers['content-encoding']).toBeUndefined();
      expect(received.rawBody.length).toBeLessThan(body.length);
      expect((received.body as { messages: unknown[] }).messages.length).toBeGreaterThan(0);
      expect(logs.at(-1)).toMatchObject({ status: 200, applied: true });
      expect(logs.at(-1)?.error).toBeUndefined();
    }
  });

  it('left as they are, go compressed as sent', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, provider, logs } = running;
    const answer = await post(`${proxy.url}/v1/chat/completions`, await CODINGS.gzip(chatBody(1)), 'gzip');
    expect(answer.status).toBe(200);
    expect(provider.requests.at(-1)?.headers['content-encoding']).toBe('gzip');
    expect(logs.at(-1)).toMatchObject({ status: 200, applied: false });
  });

  it('over the limit once decoded (a zip bomb): 413, nothing sent upstream', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }), { maxBodyBytes: 1024 * 1024 });
    const { proxy, provider } = running;
    // 64 MB of spaces inside a JSON string: ~64 KB gzipped, under the limit as sent.
    const bomb = await CODINGS.gzip(
      Buffer.concat([
        Buffer.from('{"model":"gpt-4o","messages":[],"x":"'),
        Buffer.alloc(64 << 20, 32),
        Buffer.from('"}'),
      ]),
    );
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect(await post(`${proxy.url}/v1/chat/completions`, bomb, 'gzip')).toEqual({
      status: 413,
      body: { error: expect.objectContaining({ type: 'request_too_large' }) },
    });
    expect(await post(`${proxy.url}/v1/messages`, Buffer.from('not gzip'), 'gzip')).toEqual({
      status: 400,
      body: { type: 'error', error: expect.objectContaining({ type: 'invalid_request_error' }) },
    });
    expect(provider.requests).toHaveLength(0);
  });

  it('a coding the proxy does not know is forwarded as sent', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, provider, logs } = running;
    const answer = await post(`${proxy.url}/v1/chat/completions`, Buffer.from('opaque'), 'x-unknown');
    expect(answer.status).toBe(200);
    expect(provider.requests.at(-1)?.headers['content-encoding']).toBe('x-unknown');
    expect(logs.at(-1)).toMatchObject({ status: 200, error: 'encoded_body' });
  });

  const zstdBody = readFileSync(
    join(import.meta.dirname, '..', 'fixtures', 'proxy', 'chat-12-notes.json.zst'),
  );
  const hasZstd = typeof (zlib as { zstdDecompress?: unknown }).zstdDecompress === 'function';

  it.runIf(!hasZstd)('a zstd body on a Node without zstd: 415 naming it, nothing sent upstream', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, provider, logs } = running;
    const response = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'zstd' },
      body: zstdBody,
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('accept-encoding')).toBe('gzip, deflate, br');
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('unsupported_content_encoding');
    expect(body.error.message).toContain('Content-Encoding zstd');
    expect(provider.requests).toHaveLength(0);
    expect(logs.at(-1)).toMatchObject({ status: 415 });
  });

  it.runIf(hasZstd)('a zstd body on a Node with zstd: decoded and compacted', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, provider } = running;
    const answer = await post(`${proxy.url}/v1/chat/completions`, zstdBody, 'zstd');
    expect(answer.status).toBe(200);
    expect(provider.requests.at(-1)?.headers['content-encoding']).toBeUndefined();
  });
});
