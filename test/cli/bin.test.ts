/**
 * The built bin, spawned as a child process: its contract (exit codes, stdout, stderr,
 * stdin) and real agent transcripts (SWE-agent trajectories vendored in test/fixtures/swe-agent) run
 * through it (the first one; the others through the same CLI code in process).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkOutput } from '../core/support/check-output.js';
import { cli } from '../support/cli-fixtures.js';
import { BIN, type BinRun, ensureBuilt, ROOT, runBin } from './support/built-cli.js';
import { convertTrajectory, SWE_AGENT_DIR, SWE_AGENT_TRAJECTORIES } from './support/swe-agent.js';

let dir: string;

beforeAll(async () => {
  ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'agent-compaction-bin-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const fixture = (name: string) => join(ROOT, 'test/fixtures/transcripts', `swe-agent-${name}.json`);

describe('the bin', () => {
  it('is the package bin, runnable by node, with a shebang', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(join(ROOT, pkg.bin['agent-compaction'])).toBe(BIN);
    expect((await readFile(BIN, 'utf8')).startsWith('#!/usr/bin/env node')).toBe(true);
  });

  it('estimate FILE prints the JSON estimate with exit 0', async () => {
    const run = await runBin(['estimate', fixture('marshmallow'), '--max-context', '16000']);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    const out = JSON.parse(run.stdout);
    expect(out).toMatchObject({ model: 'gpt-4o', max_context_tokens: 16_000 });
    expect(out.usage_pct).toBeCloseTo(out.total / 16_000, 5);
  });

  it('compact - reads stdin and prints the compacted messages', async () => {
    const messages = await readFile(fixture('marshmallow'), 'utf8');
    const run = await runBin(
      ['compact', '-', '--max-context', '5000', '--buffer', '300', '--force'],
      messages,
    );
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(Array.isArray(out)).toBe(true);
    expect(JSON.stringify(out).match(/<COMPACT-SUMMARY v1>/g)).toHaveLength(1);
  });

  it('exit 2 with one stderr line naming messages[3].role', async () => {
    const path = join(dir, 'no-role.json');
    await writeFile(
      path,
      JSON.stringify([
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
        { role: 'assistant', content: 'a' },
        { content: 'x' },
      ]),
    );
    const run = await runBin(['compact', path, '--max-context', '4000']);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('messages[3].role');
  });

  it('exit 2 with one stderr line for a negative --max-context', async () => {
    const run = await runBin(['compact', fixture('marshmallow'), '--max-context', '-5']);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('max-context');
  });

  it('exit 3 when the protected messages do not fit the window', async () => {
    const run = await runBin([
      'compact',
      fixture('ctf'),
      '--max-context',
      '1200',
      '--buffer',
      '100',
      '--force',
    ]);
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});

/** The transcript's own text (contents and tool call arguments), to check the summary against. */
function transcriptText(messages: Record<string, unknown>[]): string {
  return messages
    .map((m) => {
      const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
      const calls = ((m.tool_calls as { function: { arguments: string } }[] | undefined) ?? [])
        .map((c) => c.function.arguments)
        .join('\n');
      return `${content}\n${calls}`;
    })
    .join('\n');
}

function sectionItems(summary: string, title: string): string[] {
  const match = new RegExp(`## ${title}\\n((?:- .*\\n?)+)`).exec(summary);
  return match
    ? match[1]!
        .trim()
        .split('\n')
        .map((line) => line.replace(/^- /, ''))
    : [];
}

describe.each(Object.keys(SWE_AGENT_TRAJECTORIES))('real transcript: SWE-agent %s', (name) => {
  let messages: Record<string, unknown>[];
  let total: number;
  // The same CLI code as the bin, in process: the bin's own contract (exit codes, stdin, one
  // stderr line) is the describe above; a process per run here costs half a minute of start-up
  // and tokenizer loading on a slow machine, and tests nothing new.
  const invoke = (args: string[]): Promise<BinRun> => cli(args);

  beforeAll(async () => {
    messages = JSON.parse(await readFile(fixture(name), 'utf8'));
  });

  it('the fixture is the converted trajectory (tool_call_ids lists become tool_call_id)', async () => {
    const source = JSON.parse(
      await readFile(join(ROOT, SWE_AGENT_DIR, SWE_AGENT_TRAJECTORIES[name]!), 'utf8'),
    );
    expect(messages).toEqual(convertTrajectory(source));
    for (const message of messages) expect(message).not.toHaveProperty('tool_call_ids');
  });

  it('estimate: exit 0 and a breakdown that adds up', async () => {
    const run = await invoke(['estimate', fixture(name)]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    total = out.total;
    expect(out.breakdown.system).toBeGreaterThan(0);
    expect(out.total).toBe(
      out.breakdown.system + out.breakdown.developer + out.breakdown.tools_schema + out.breakdown.messages,
    );
    expect(out.total).toBeGreaterThan(5_000);
  });

  it.each([0.6, 0.4])(
    'compact into %s of its size: exit 0, pairs whole, one summary, consistent report',
    async (share) => {
      const maxContext = Math.ceil(total * share);
      const report = join(dir, `${name}-${share}-report.json`);
      const run = await invoke([
        'compact',
        fixture(name),
        '--max-context',
        String(maxContext),
        '--buffer',
        '300',
        '--max-summary-tokens',
        '400',
        '--force',
        '--report',
        report,
      ]);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const out = JSON.parse(run.stdout) as Record<string, unknown>[];
      const shape = checkOutput({
        format: 'openai-chat',
        raw: messages,
        output: out,
        rolesNeverPrune: ['system', 'developer'],
      });
      expect(shape.summaries).toBe(1);
      const written = JSON.parse(await readFile(report, 'utf8'));
      expect(written).not.toHaveProperty('messages');
      expect(written.budget).toBe(maxContext - 300);
      expect(written.tokensBefore).toBe(total);
      expect(written.tokensAfter).toBeLessThanOrEqual(written.budget);
      expect(written.prunedCount).toBeGreaterThan(0);
      expect(written.summary.text).toBe(shape.summaryText);
      // The report agrees with an estimate of the printed messages.
      const outPath = join(dir, `${name}-${share}-out.json`);
      await writeFile(outPath, run.stdout);
      const estimate = JSON.parse((await invoke(['estimate', outPath])).stdout);
      expect(estimate.total).toBe(written.tokensAfter);
      // The summary never invents identifiers: each one is in the transcript.
      const text = transcriptText(messages);
      const identifiers = ['Key entities and identifiers', 'Key entities', 'Sources'].flatMap((title) =>
        sectionItems(shape.summaryText!, title),
      );
      expect(identifiers.length).toBeGreaterThan(0);
      for (const identifier of identifiers) expect(text, identifier).toContain(identifier);
    },
  );

  it('the summary carries identifiers of the task (file paths from the transcript)', async () => {
    const run = await invoke([
      'compact',
      fixture(name),
      '--max-context',
      String(Math.ceil(total * 0.5)),
      '--buffer',
      '300',
      '--max-summary-tokens',
      '500',
      '--force',
    ]);
    expect(run.code).toBe(0);
    const summary = String(
      (JSON.parse(run.stdout) as { content: unknown }[]).find((m) =>
        String(m.content).startsWith('<COMPACT-SUMMARY'),
      )?.content,
    );
    const expected: Record<string, RegExp> = {
      marshmallow: /src\/marshmallow\/fields\.py/,
      pydicom: /\/pydicom__pydicom\/|reproduce_bug\.py|pydicom\/\w+\.py/,
      ctf: /\.(pl|cgi)\b|https?:\/\//,
    };
    expect(summary).toMatch(expected[name]!);
    const paths = summary.match(/[\w.-]*\/[\w./-]+\.[a-z]{1,4}\b/g) ?? [];
    const text = transcriptText(messages);
    for (const path of paths) expect(text, path).toContain(path);
  });
});
