/**
 * Codex CLI (`@openai/codex`, a real agent CLI nobody here wrote) in `codex exec`, given the
 * proxy as a custom Responses provider (it ignores OPENAI_BASE_URL), in front of the loopback
 * provider server whose scripted model makes it run `seq` through `exec_command` again and
 * again: every request streamed, no session header. Every request the provider receives stays
 * inside the 8,000-token window with its tool pairs intact, in one session.
 *
 * Codex is not a dependency: CI installs it (`npm install --no-save @openai/codex`) and sets
 * COMPACT_REQUIRE_AGENT_CLI=1, which turns a missing binary into a failure.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ProviderHandler } from '../../src/testing/provider-test-server.js';
import { requestViolations } from '../support/tool-loop.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

const BIN = process.env.COMPACT_CODEX_BIN ?? join(process.cwd(), 'node_modules', '.bin', 'codex');
const available = existsSync(BIN);
const required = process.env.COMPACT_REQUIRE_AGENT_CLI === '1';
const STEPS = 12;

if (!available && !required)
  console.warn(`[proxy] Codex test skipped: no ${BIN} (npm install --no-save @openai/codex)`);

function seqLoop(): ProviderHandler {
  let calls = 0;
  return (request) => {
    if (request.endpoint !== 'openai-responses') return undefined;
    if (calls >= STEPS) return { text: `All ${STEPS} counts done.` };
    calls++;
    return {
      toolCalls: [
        { id: `call_${calls}`, name: 'exec_command', arguments: { cmd: `seq ${calls} ${calls + 400}` } },
      ],
    };
  };
}

async function runCodex(baseUrl: string, home: string): Promise<{ code: number | null; out: string }> {
  const provider = (key: string, value: string) => ['-c', `model_providers.proxied.${key}=${value}`];
  const args = [
    'exec',
    '--dangerously-bypass-approvals-and-sandbox',
    '--skip-git-repo-check',
    '--ephemeral',
    '--json',
    '-m',
    'gpt-5',
    '-c',
    'model_provider=proxied',
    ...provider('name', 'proxied'),
    ...provider('base_url', `"${baseUrl}/v1"`),
    ...provider('env_key', 'OPENAI_API_KEY'),
    ...provider('wire_api', 'responses'),
    '-c',
    'analytics.enabled=false',
    '-c',
    'check_for_update_on_startup=false',
    '--disable',
    'plugins',
    '--disable',
    'apps',
    '--disable',
    'remote_plugin',
    'Count with seq until told to stop.',
  ];
  const child = spawn(BIN, args, {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, OPENAI_API_KEY: 'sk-codex-test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  const code = await new Promise<number | null>((done) => child.on('close', done));
  return { code, out };
}

let running: ProxiedProvider | undefined;
const homes: string[] = [];
afterAll(async () => {
  await running?.close();
  for (const home of homes) await rm(home, { recursive: true, force: true });
});

describe.skipIf(!available && !required)('Codex CLI through the proxy', () => {
  it('a long tool loop: every request under 8,000 tokens, pairs intact, one session', async () => {
    expect(existsSync(BIN), `Codex is required here (COMPACT_REQUIRE_AGENT_CLI=1): ${BIN}`).toBe(true);
    running = await startProxiedProvider(seqLoop(), { manager: { model: 'gpt-5' } });
    const home = await mkdtemp(join(tmpdir(), 'proxy-codex-home-'));
    homes.push(home);
    const { code, out } = await runCodex(running.proxy.url, home);
    expect(code, out.slice(-2000)).toBe(0);
    expect(out).toContain(`All ${STEPS} counts done.`);
    const { provider, manager, logs } = running;
    const loop = provider.requests.filter((request) => request.endpoint === 'openai-responses');
    expect(loop.length).toBe(STEPS + 1);
    expect(loop.every((request) => request.stream)).toBe(true);
    // gpt-5 counts with its own tokenizer: the manager's count is exact.
    expect(requestViolations(provider, manager)).toEqual([]);
    expect(logs.filter((entry) => entry.applied).length).toBeGreaterThanOrEqual(2);
    const sessions = new Set(logs.filter((entry) => entry.session).map((entry) => entry.session));
    expect(sessions.size).toBe(1);
    expect(manager.lastReportedUsage([...sessions][0]!)?.inputTokens).toBeGreaterThan(0);
  });
});
