import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from './support/ensure-built.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
// TypeScript's native compiler: the same check as tsc in seconds rather than minutes.
const TSGO = join(ROOT, 'node_modules', '.bin', 'tsgo');
const EXAMPLES = ['agents-sdk-minimal', 'coding-session', 'long-research', 'anthropic-thread'];

/** Each example's output, from one process that runs them all offline (test/support/run-examples.ts). */
let outputs: Promise<Map<string, string>> | undefined;

// Examples import `agent-compaction` by its package name, which resolves (through the
// package's own `exports`) to dist/: `npm test` builds first; a lone run builds when needed.
beforeAll(() => ensureBuilt());

/** Runs every example offline: no API keys, the local scripted model, the embedded summarizer. */
async function runAll(): Promise<Map<string, string>> {
  const env: NodeJS.ProcessEnv = { ...process.env, EXAMPLES_OFFLINE: '1', NODE_ENV: 'test' };
  for (const key of [
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'COMPACT_ARIADNE_URL',
    'ANTHROPIC_MAX_CONTEXT_TOKENS',
  ])
    delete env[key];
  const { stdout } = await run(TSX, [join('test', 'support', 'run-examples.ts'), ...EXAMPLES], {
    cwd: ROOT,
    env,
    timeout: 600_000,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  const sections = new Map<string, string>();
  for (const match of stdout.matchAll(/^=== example (\S+)\n([\s\S]*?)^=== end \1 \((ok|failed)\)$/gm))
    sections.set(match[1]!, match[3] === 'ok' ? match[2]! : `FAILED\n${match[2]}`);
  return sections;
}

/** One example's output; its error when it threw. */
async function example(name: string): Promise<string> {
  outputs ??= runAll();
  const output = (await outputs).get(name);
  if (output === undefined) throw new Error(`${name} printed no section: it did not run`);
  if (output.startsWith('FAILED\n')) throw new Error(`${name} threw:\n${output.slice(7)}`);
  return output;
}

function count(output: string, pattern: RegExp): number {
  return Number(pattern.exec(output)?.[1] ?? Number.NaN);
}

describe('examples run offline', () => {
  it('type-check against the built package', async () => {
    await expect(
      run(TSGO, ['-p', 'examples/tsconfig.json'], { cwd: ROOT, timeout: 280_000 }),
    ).resolves.toBeDefined();
  });

  it('agents-sdk-minimal: compacts with the console exporter', async () => {
    const output = await example('agents-sdk-minimal');
    expect(output).toMatch(/turn 6: Done:/);
    expect(output).toContain('[compact]');
    expect(output).toContain('compact.reduction');
    expect(count(output, /compactions: (\d+)/)).toBeGreaterThanOrEqual(1);
  });

  it('coding-session: keeps the raw history, pins the brief, traces to Ariadne', async () => {
    const output = await example('coding-session');
    expect(output).toMatch(/compaction v2:/);
    const stored = count(output, /history: (\d+) items stored/);
    const view = count(output, /, (\d+) items in the model's view/);
    expect(view).toBeLessThan(stored);
    expect(output).toContain('task brief kept verbatim: true');
    expect(count(output, /ariadne: (\d+) spans received/)).toBeGreaterThan(0);
    expect(output).toContain('compact.summary_created');
  });

  it('long-research: several compaction rounds, every request within the budget', async () => {
    const output = await example('long-research');
    expect(output).toMatch(/question 10: \d+ steps/);
    expect(count(output, /compaction rounds: (\d+)/)).toBeGreaterThanOrEqual(2);
    const history = count(output, /~(\d+) tokens;/);
    const largest = count(output, /largest request sent: (\d+) tokens/);
    const budget = count(output, /\(budget (\d+)\)/);
    expect(history).toBeGreaterThan(budget);
    expect(largest).toBeLessThanOrEqual(budget);
  });

  it('anthropic-thread: compacts the thread before replies', async () => {
    const output = await example('anthropic-thread');
    expect(output).toMatch(/turn 14: Noted/);
    expect(output).toMatch(/compacted \d+ -> \d+ tokens; summary starts "Preferences:/);
    expect(count(output, /compactions: (\d+)/)).toBeGreaterThanOrEqual(1);
  });
});
