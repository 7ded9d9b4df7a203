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
import { afterAll, describe, expect, it } from 'vitest';
import type { ProviderHandler } from '../../src/testing/provider-test-server.js';
import { agentCli, expectProxiedLoop, freshHome, removeHomes, runCli } from './agent-cli-loop.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

const CLAUDE = agentCli('Claude Code', 'claude', 'COMPACT_CLAUDE_BIN', '@anthropic-ai/claude-code');
const STEPS = 16;

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

/** Runs `claude -p` against `baseUrl` in `home`; resolves with its exit code and output. */
function runClaude(baseUrl: string, home: string) {
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
  return runCli(CLAUDE.bin, args, home, {
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-claude-code-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_NON_ESSENTIAL_MODEL_CALLS: '1',
  });
}

let running: ProxiedProvider | undefined;
afterAll(async () => {
  await running?.close();
  await removeHomes();
});

describe.skipIf(!CLAUDE.run)('Claude Code through the proxy', () => {
  it('a long tool loop: every request under 8,000 tokens, pairs intact, one session', async () => {
    CLAUDE.expectInstalled();
    running = await startProxiedProvider(seqLoop(), { manager: { model: 'claude-sonnet-4-5' } });
    const { code, out } = await runClaude(running.proxy.url, await freshHome('proxy-claude-home-'));
    expect(code, out.slice(0, 2000)).toBe(0);
    expect(JSON.parse(out).result).toBe(`All ${STEPS} counts done.`);
    // Claude's tokenizer is not public: the size that counts is the one the provider reports.
    expectProxiedLoop(running, { endpoint: 'anthropic-messages', steps: STEPS, count: 'reported' });
  });
});
