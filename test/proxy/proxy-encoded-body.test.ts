/**
 * Request bodies a client compressed (`Content-Encoding: gzip`, `deflate`, `br`) are decoded,
 * compacted and forwarded uncompressed; one the proxy leaves as it is goes compressed as sent. A
 * body that decoded would pass the body limit (a zip bomb) is a 413 with nothing sent upstream,
 * and one not valid in its coding a 400, each in the provider's error shape. A zstd body (made by
 * the `zstd` tool, vendored, or written by hand in raw and RLE blocks) is decoded by Node's zlib
 * where it has zstd, else by fzstd in a worker, with the same 413 and 400.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { rawBlocks, rleBlocks, zstdFrame } from '../support/zstd-frame.js';
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

  const hasZstd = typeof (zlib as { zstdDecompress?: unknown }).zstdDecompress === 'function';
  const zstdBody = readFileSync(
    join(import.meta.dirname, '..', 'fixtures', 'proxy', 'chat-12-notes.json.zst'),
  );

  it('zstd: decoded and compacted (zlib from Node 22.15, fzstd in a worker before), one frame or several', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, provider, logs } = running;
    const answer = await post(`${proxy.url}/v1/chat/completions`, zstdBody, 'zstd');
    expect(answer.status).toBe(200);
    const received = provider.requests.at(-1)!;
    expect(received.headers['content-encoding']).toBeUndefined();
    expect(logs.at(-1)).toMatchObject({ status: 200, applied: true });
    // Two frames with a skippable frame between them (RFC 8878 3.1.2), written by hand.
    const body = chatBody(24, 'framed');
    const half = body.length >> 1;
    const framed = Buffer.concat([
      zstdFrame(rawBlocks(body.slice(0, half))),
      Buffer.from([0x5e, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]),
      zstdFrame(rawBlocks(body.slice(half))),
    ]);
    expect((await post(`${proxy.url}/v1/chat/completions`, framed, 'zstd')).status).toBe(200);
    expect(provider.requests.at(-1)!.rawBody.length).toBeLessThan(body.length);
    expect(logs.at(-1)).toMatchObject({ status: 200, applied: true });
  });

  it('zstd over the limit once decoded (a bomb, or a window past it): 413; not zstd: 400; nothing sent upstream', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }), { maxBodyBytes: 1024 * 1024 });
    const { proxy, provider } = running;
    // 64 MiB of spaces inside a JSON string in RLE blocks: ~2 KB as sent.
    const bomb = zstdFrame([
      ...rawBlocks('{"model":"gpt-4o","messages":[],"x":"'),
      ...rleBlocks(32, 64 << 20),
      ...rawBlocks('"}'),
    ]);
    expect(bomb.length).toBeLessThan(4096);
    const tooLarge = { status: 413, body: { error: expect.objectContaining({ type: 'request_too_large' }) } };
    expect(await post(`${proxy.url}/v1/chat/completions`, bomb, 'zstd')).toEqual(tooLarge);
    // A 7-byte body in a frame whose header asks for a 1.875 GiB window (fzstd would allocate it;
    // zlib's decoder refuses a window over 128 MiB as an error of the data: a 400 there).
    const wide = zstdFrame(rawBlocks('{"a":1}'), 0xa7);
    const refused = await post(`${proxy.url}/v1/chat/completions`, wide, 'zstd');
    expect(refused.status).toBe(hasZstd ? 400 : 413);
    const invalid = {
      status: 400,
      body: { type: 'error', error: expect.objectContaining({ type: 'invalid_request_error' }) },
    };
    expect(await post(`${proxy.url}/v1/messages`, Buffer.from('not zstd'), 'zstd')).toEqual(invalid);
    expect(await post(`${proxy.url}/v1/messages`, zstdBody.subarray(0, 200), 'zstd')).toEqual(invalid);
    expect(provider.requests).toHaveLength(0);
    // The proxy still decodes after them.
    expect((await post(`${proxy.url}/v1/chat/completions`, zstdBody, 'zstd')).status).toBe(200);
  });
});
