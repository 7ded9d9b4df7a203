/**
 * zstd where nothing decodes it: Node 20's zlib has no zstd and the optional fzstd is not
 * installed (`npm i --omit=optional`; here made unresolvable by a resolve hook in a process
 * running the built proxy). The body is refused with a 415 naming the coding and what would
 * decode it, `Accept-Encoding` listing what does; nothing goes upstream. On a Node whose zlib
 * has zstd the hook changes nothing: decoded there (skipped).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { ensureBuilt, ROOT } from '../support/ensure-built.js';

const hasZstd = typeof (zlib as { zstdDecompress?: unknown }).zstdDecompress === 'function';
let provider: ProviderTestServer | undefined;
let child: ChildProcess | undefined;
beforeAll(() => ensureBuilt());
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await provider?.close();
});

/** The built proxy started in a child process without fzstd; resolves with its URL. */
function proxyWithoutFzstd(upstream: string): Promise<string> {
  const dist = (path: string) => JSON.stringify(pathToFileURL(join(ROOT, 'dist', path)).href);
  const script = [
    `import { CompactManager } from ${dist('index.js')};`,
    `import { startProxy } from ${dist('proxy/index.js')};`,
    `const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 8000 });`,
    `const proxy = await startProxy({ upstream: ${JSON.stringify(upstream)}, manager, port: 0 });`,
    'console.log(proxy.url);',
  ].join('\n');
  const hook = join(ROOT, 'test', 'support', 'hide-fzstd.mjs');
  child = spawn(process.execPath, ['--import', hook, '--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const started = child;
  return new Promise((resolve, reject) => {
    let out = '';
    started.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolve(out.trim());
    });
    started.once('exit', (code) => reject(new Error(`the proxy exited ${code} before listening`)));
  });
}

describe.skipIf(hasZstd)('zstd with neither zlib zstd nor fzstd', () => {
  it('is a 415 naming zstd and fzstd, Accept-Encoding without zstd, nothing sent upstream', async () => {
    provider = await startProviderTestServer({});
    const url = await proxyWithoutFzstd(provider.url);
    const body = readFileSync(join(ROOT, 'test', 'fixtures', 'proxy', 'chat-12-notes.json.zst'));
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'zstd' },
      body,
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('accept-encoding')).toBe('gzip, deflate, br');
    const answer = (await response.json()) as { error: { type: string; message: string } };
    expect(answer.error.type).toBe('unsupported_content_encoding');
    expect(answer.error.message).toContain('Content-Encoding zstd');
    expect(answer.error.message).toContain('fzstd');
    expect(provider.requests).toHaveLength(0);
  });
});
