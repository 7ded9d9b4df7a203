/**
 * `Expect: 100-continue` (curl sends it before a body over 1 KB): a declared length over the
 * body limit is answered 413 before any `100 Continue`, so the client never uploads the body
 * the proxy would refuse; a body within the limit gets its 100 and goes through. The client is
 * Node's own `http.request`, which holds the body until `continue` as clients do.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

interface Outcome {
  status: number;
  body: string;
  /** Whether the proxy said `100 Continue` before its answer. */
  continued: boolean;
}

/** A POST that announces `body` with `Expect: 100-continue` and sends it only on `continue`. */
function expectingPost(url: string, path: string, body: string, headers: Record<string, string> = {}) {
  return new Promise<Outcome>((resolve, reject) => {
    let continued = false;
    const sent = request(`${url}${path}`, {
      method: 'POST',
      agent: false,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        expect: '100-continue',
      },
    });
    sent.on('continue', () => {
      continued = true;
      sent.end(body);
    });
    sent.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text, continued }));
    });
    sent.on('error', reject);
  });
}

const chat = (content: string) =>
  JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

describe('Expect: 100-continue', () => {
  it('a declared length over the limit: 413 before any 100 Continue, on a compacted and a forwarded path', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }), { maxBodyBytes: 1000 });
    const { proxy, provider } = running;
    const compacted = await expectingPost(proxy.url, '/v1/chat/completions', chat('x'.repeat(2000)));
    expect(compacted).toMatchObject({ status: 413, continued: false });
    expect(JSON.parse(compacted.body)).toMatchObject({ error: { type: 'request_too_large' } });
    const forwarded = await expectingPost(proxy.url, '/v1/embeddings', 'x'.repeat(2000));
    expect(forwarded).toMatchObject({ status: 413, continued: false });
    expect(provider.requests).toHaveLength(0);
    expect(running.logs.map((line) => line.status)).toEqual([413, 413]);
  });

  it('a body within the limit: 100 Continue, then the answer', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }), { maxBodyBytes: 100_000 });
    const answer = await expectingPost(running.proxy.url, '/v1/chat/completions', chat('hello'));
    expect(answer).toMatchObject({ status: 200, continued: true });
    expect(running.provider.requests).toHaveLength(1);
  });
});
