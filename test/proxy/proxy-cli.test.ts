/**
 * `agent-compaction proxy` as a process: it prints its address, compacts a client's loop with
 * the config's archive, writes one line per request without the client's key, stops on SIGTERM
 * with exit 0 (from a child process of its own with a capped young generation, SIGTERM passed
 * on); then `status` and `report` read the session it archived, by the id its response
 * header named.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { PROXY_SEMI_SPACE_MB } from '../../src/cli/respawn-with-heap-flags.js';
import { type ProviderTestServer, startProviderTestServer } from '../../src/testing/provider-test-server.js';
import { cli } from '../support/cli-fixtures.js';
import { reusedIdLoop, toolOutput } from '../support/tool-loop.js';

const KEY = 'sk-ant-api03-CLIPROXYSECRET0123456789abcdefghijklmnopqrstuvwxyz';
let dir: string | undefined;
let provider: ProviderTestServer | undefined;
let child: ChildProcess | undefined;
afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  await provider?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The process the CLI started to serve (Linux: read from /proc), or `undefined` elsewhere. */
function proxyProcess(parent: number): { pid: number; cmdline: string } | undefined {
  const children = `/proc/${parent}/task/${parent}/children`;
  if (!existsSync(children)) return undefined;
  const pid = Number(readFileSync(children, 'utf8').trim().split(/\s+/)[0]);
  expect(pid).toBeGreaterThan(0);
  return { pid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ') };
}

/** Resolves with the first line the child writes on stdout. */
function firstLine(process: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    process.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const end = out.indexOf('\n');
      if (end >= 0) resolve(out.slice(0, end));
    });
    process.once('exit', (code) => reject(new Error(`the proxy exited ${code} before listening`)));
  });
}

describe('agent-compaction proxy (the CLI command)', () => {
  it('serves, archives, logs without keys, stops on SIGTERM; status and report read its session', async () => {
    dir = await mkdtemp(join(tmpdir(), 'proxy-cli-'));
    const archive = join(dir, 'archive');
    const config = join(dir, 'compact.yaml');
    await writeFile(config, `version: 1\nstorage:\n  adapter: fs\n  path: ${archive}\n`);
    provider = await startProviderTestServer({
      handler: reusedIdLoop({ tool: 'probe', steps: 14, idFor: (step) => `toolu_${step}` }),
    });
    const args = ['--import', 'tsx', 'src/cli/main.ts', 'proxy', '--upstream', provider.url, '--port', '0'];
    args.push('--json', '--model', 'gpt-4o', '--max-context', '8000', '--config', config);
    child = spawn(process.execPath, args, { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const { url } = JSON.parse(await firstLine(child)) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The proxy serves from a child started with its heap flag (src/cli/respawn-with-heap-flags.ts).
    const served = proxyProcess(child.pid!);
    if (served !== undefined)
      expect(served.cmdline).toContain(`--max-semi-space-size=${PROXY_SEMI_SPACE_MB}`);
    const client = new Anthropic({ apiKey: KEY, baseURL: url, maxRetries: 0 });
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Probe every host.' }];
    let session = '';
    for (let step = 0; step < 16; step++) {
      const { data, response } = await client.messages
        .create({ model: 'claude-sonnet-4-5', max_tokens: 100, messages })
        .withResponse();
      session = response.headers.get('x-compaction-session') ?? '';
      const call = data.content.find((block) => block.type === 'tool_use');
      if (!call) break;
      messages.push({ role: 'assistant', content: data.content });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: call.id, content: toolOutput(step) }],
      });
    }
    expect(session).toMatch(/^fp-[0-9a-f]{32}$/);
    const exited = new Promise<number | null>((done) => child!.once('exit', done));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // SIGTERM reached the proxy's own process, which finished before its parent did.
    if (served !== undefined) expect(existsSync(`/proc/${served.pid}`)).toBe(false);
    // One JSON line per request, none with the key; some compacted.
    const lines = stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { session?: string; applied?: boolean });
    expect(lines.length).toBe(provider.requests.length);
    expect(lines.some((line) => line.applied)).toBe(true);
    expect(stderr).not.toContain('CLIPROXYSECRET');
    // status and report read the session the proxy archived.
    const folder = join(archive, session);
    expect(existsSync(folder)).toBe(true);
    const status = await cli(['status', folder, '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(session);
    const html = join(dir, 'report.html');
    const report = await cli(['report', folder, '--out', html]);
    expect(report.code, report.stderr).toBe(0);
    expect(await readFile(html, 'utf8')).toContain('<html');
  });
});
