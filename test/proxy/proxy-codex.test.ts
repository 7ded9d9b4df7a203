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
import { afterAll, describe, expect, it } from 'vitest';
import type { ProviderHandler } from '../../src/testing/provider-test-server.js';
import { agentCli, expectProxiedLoop, freshHome, removeHomes, runCli } from './agent-cli-loop.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

const CODEX = agentCli('Codex', 'codex', 'COMPACT_CODEX_BIN', '@openai/codex');
const STEPS = 12;

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

/** Runs `codex exec` against `baseUrl` in `home`; resolves with its exit code and output. */
function runCodex(baseUrl: string, home: string) {
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
  return runCli(CODEX.bin, args, home, { CODEX_HOME: home, OPENAI_API_KEY: 'sk-codex-test' });
}

let running: ProxiedProvider | undefined;
afterAll(async () => {
  await running?.close();
  await removeHomes();
});

describe.skipIf(!CODEX.run)('Codex CLI through the proxy', () => {
  it('a long tool loop: every request under 8,000 tokens, pairs intact, one session', async () => {
    CODEX.expectInstalled();
    running = await startProxiedProvider(seqLoop(), { manager: { model: 'gpt-5' } });
    const { code, out } = await runCodex(running.proxy.url, await freshHome('proxy-codex-home-'));
    expect(code, out.slice(-2000)).toBe(0);
    expect(out).toContain(`All ${STEPS} counts done.`);
    // gpt-5 counts with its own tokenizer: the manager's count is exact.
    expectProxiedLoop(running, { endpoint: 'openai-responses', steps: STEPS, exactCalls: true });
  });
});
