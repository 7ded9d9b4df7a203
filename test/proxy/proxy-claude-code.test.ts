/**
 * Claude Code (`@anthropic-ai/claude-code`, a real agent CLI nobody here wrote) in print mode,
 * pointed at the proxy with ANTHROPIC_BASE_URL, in front of the loopback provider server whose
 * scripted model makes it run `seq` again and again: a long tool loop, every request streamed,
 * no session header. Every request the provider receives stays inside the 8,000-token window
 * with its tool pairs intact, all in one session found from the history.
 *
 * Claude Code is not a dependency (its package is ~380 MB): CI installs it
 * (`npm install --no-save @anthropic-ai/claude-code`) and sets COMPACT_REQUIRE_AGENT_CLI=1,
 * which turns a missing binary into a failure. Elsewhere the test is skipped with a notice.
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

const BIN = process.env.COMPACT_CLAUDE_BIN ?? join(process.cwd(), 'node_modules', '.bin', 'claude');
const available = existsSync(BIN);
const required = process.env.COMPACT_REQUIRE_AGENT_CLI === '1';
const STEPS = 16;

if (!available && !required)
  console.warn(
    `[proxy] Claude Code test skipped: no ${BIN} (npm install --no-save @anthropic-ai/claude-code)`,
  );

/** The scripted model: `seq` through Bash STEPS times (outputs ~700 tokens each), then an answer. */
function seqLoop(): ProviderHandler {
  let calls = 0;
  return (request) => {
    if (request.endpoint !== 'anthropic-messages') return undefined;
    const tools = (request.body as { tools?: unknown[] } | undefined)?.tools ?? [];
    if (tools.length === 0) return { text: 'ok' }; // a side request (titles, quota): not the loop
    if (calls >= STEPS) return { text: `All ${STEPS} counts done.` };
    calls++;
    return {
      toolCalls: [
        {
          id: `toolu_${calls}`,
          name: 'Bash',
          arguments: { command: `seq ${calls} ${calls + 500}`, description: 'count' },
        },
      ],
    };
  };
}

/** Runs `claude -p` against `baseUrl` in a fresh HOME; resolves with its exit code and output. */
async function runClaude(baseUrl: string, home: string): Promise<{ code: number | null; out: string }> {
  const args = [
    '-p',
    'Count with seq until told to stop.',
    '--tools',
    'Bash',
    '--allowedTools',
    'Bash(seq:*)',
    '--system-prompt',
    'You are a test agent.',
    '--model',
    'claude-sonnet-4-5',
    '--output-format',
    'json',
  ];
  const child = spawn(BIN, args, {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: 'sk-ant-claude-code-test',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1',
    },
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

describe.skipIf(!available && !required)('Claude Code through the proxy', () => {
  it('a long tool loop: every request under 8,000 tokens, pairs intact, one session', async () => {
    expect(existsSync(BIN), `Claude Code is required here (COMPACT_REQUIRE_AGENT_CLI=1): ${BIN}`).toBe(true);
    running = await startProxiedProvider(seqLoop(), { manager: { model: 'claude-sonnet-4-5' } });
    const home = await mkdtemp(join(tmpdir(), 'proxy-claude-home-'));
    homes.push(home);
    const { code, out } = await runClaude(running.proxy.url, home);
    expect(code, out.slice(0, 2000)).toBe(0);
    expect(JSON.parse(out).result).toBe(`All ${STEPS} counts done.`);
    const { provider, manager, logs } = running;
    const loop = provider.requests.filter((request) => request.endpoint === 'anthropic-messages');
    expect(loop.length).toBeGreaterThan(STEPS);
    // Claude Code streams every call.
    expect(loop.every((request) => request.stream)).toBe(true);
    // Claude's tokenizer is not public: the size that counts is the one the provider reports.
    expect(requestViolations(provider, manager, 'reported')).toEqual([]);
    const compacted = logs.filter((entry) => entry.applied);
    expect(compacted.length).toBeGreaterThanOrEqual(2);
    const sessions = new Set(logs.filter((entry) => entry.session).map((entry) => entry.session));
    expect(sessions.size).toBe(1);
    expect(manager.lastReportedUsage([...sessions][0]!)?.inputTokens).toBeGreaterThan(0);
  });
});
