/**
 * A bare OpenAI Chat upstream in this process for the proxy benches (bench/path-blocks.ts,
 * bench/proxy-tiny-messages.ts): every request read to its end and answered with an empty
 * completion, so what a bench times is the proxy's work. And one POST of a JSON body.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts the upstream on a free loopback port: its base URL and how to close it. */
export async function startBareUpstream(): Promise<{ url: string; close: () => void }> {
  const upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end('{"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":1}}');
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    close: () => upstream.close(),
  };
}

/** POSTs `body` (JSON) to `url`; resolves when the answer has been read to its end. */
export function postJson(url: string, body: Buffer): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': body.length },
    });
    req.on('response', (res) => res.resume().on('end', resolve));
    req.on('error', reject);
    req.end(body);
  });
}
