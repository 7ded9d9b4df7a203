/**
 * Private helpers of the agent CLI tests (Claude Code, Codex, Qwen Code): finding the CLI (a one-line
 * notice and a skip where it is absent, a failure where COMPACT_REQUIRE_AGENT_CLI=1 asks for
 * it), running it in a fresh HOME, and what every CLI's tool loop through the proxy must show.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ProviderEndpoint } from '../../src/testing/provider-wire/scripted-reply.js';
import { requestViolations } from '../support/tool-loop.js';
import type { ProxiedProvider } from './proxy-fixture.js';

/** An agent CLI the tests drive. */
export interface AgentCli {
  /** Its binary. */
  bin: string;
  /** Whether to run its test: installed, or required (then a missing binary fails it). */
  run: boolean;
  /** Fails the test when the binary is missing (COMPACT_REQUIRE_AGENT_CLI=1). */
  expectInstalled(): void;
}

/** The CLI `name` from `node_modules/.bin/<command>` or `$<binVariable>`; prints a notice when skipped. */
export function agentCli(name: string, command: string, binVariable: string, pkg: string): AgentCli {
  const bin = process.env[binVariable] ?? join(process.cwd(), 'node_modules', '.bin', command);
  const available = existsSync(bin);
  const required = process.env.COMPACT_REQUIRE_AGENT_CLI === '1';
  if (!available && !required)
    console.warn(`[proxy] ${name} test skipped: no ${bin} (npm install --no-save ${pkg})`);
  return {
    bin,
    run: available || required,
    expectInstalled: () =>
      expect(existsSync(bin), `${name} is required here (COMPACT_REQUIRE_AGENT_CLI=1): ${bin}`).toBe(true),
  };
}

const homes: string[] = [];

/** A fresh HOME folder for one CLI run (removed by {@link removeHomes}). */
export async function freshHome(prefix: string): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), prefix));
  homes.push(home);
  return home;
}

/** Removes the folders {@link freshHome} made. */
export async function removeHomes(): Promise<void> {
  for (const home of homes.splice(0)) await rm(home, { recursive: true, force: true });
}

/** Runs `bin args` in `home` with only `env` (and PATH, HOME); resolves with its exit code and output. */
export async function runCli(
  bin: string,
  args: string[],
  home: string,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const child = spawn(bin, args, {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const take = (chunk: Buffer) => {
    out += chunk.toString('utf8');
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const code = await new Promise<number | null>((done) => child.on('close', done));
  return { code, out };
}

/**
 * What a CLI's tool loop through the proxy shows: `steps` tool rounds or more on `endpoint`,
 * every one streamed; every request sound and under the window (by the manager's count, or by
 * the provider's with `count: 'reported'` where the model's tokenizer is not public); compacted
 * twice or more; one session, found without a header; usage recorded; and after the first
 * call each body read from what is new.
 */
export function expectProxiedLoop(
  running: ProxiedProvider,
  options: { endpoint: ProviderEndpoint; steps: number; exactCalls?: boolean; count?: 'reported' },
): void {
  const { provider, manager, logs } = running;
  const loop = provider.requests.filter((request) => request.endpoint === options.endpoint);
  if (options.exactCalls) expect(loop.length).toBe(options.steps + 1);
  else expect(loop.length).toBeGreaterThan(options.steps);
  expect(loop.every((request) => request.stream)).toBe(true);
  expect(requestViolations(provider, manager, options.count)).toEqual([]);
  expect(logs.filter((entry) => entry.applied).length).toBeGreaterThanOrEqual(2);
  const sessions = new Set(logs.filter((entry) => entry.session).map((entry) => entry.session));
  expect(sessions.size).toBe(1);
  expect(logs.filter((entry) => entry.session).every((entry) => entry.sessionFrom === 'fingerprint')).toBe(
    true,
  );
  expect(manager.lastReportedUsage([...sessions][0]!)?.inputTokens).toBeGreaterThan(0);
  const later = logs.filter((entry) => entry.session).slice(1);
  expect(later.filter((entry) => (entry.reused ?? 0) > 0).length).toBeGreaterThan(later.length / 2);
}
