import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { anthropicSession, chatSession, cli, useTempFiles } from '../../test/support/cli-fixtures.js';
import { COMMAND_HELP } from './help.js';
import { EXIT_CODES, runCli } from './run-cli.js';

const temp = useTempFiles();
const oneLine = (text: string) => text.trim().split('\n');

describe('--help', () => {
  it('lists every command with a whole sentence (nothing cut mid-sentence)', async () => {
    const run = await cli(['--help']);
    expect(run.code).toBe(0);
    const list = run.stdout.split('Commands:\n')[1]!.split('\n\n')[0]!.split('\n');
    expect(list).toHaveLength(Object.keys(COMMAND_HELP).length);
    for (const line of list) {
      expect(line).toMatch(/^ {2}[a-z]+ +[A-Z].*\.$/);
      expect(line.length).toBeLessThanOrEqual(100);
    }
    expect(run.stdout).not.toMatch(/--report FILE writes$|tokenizer,$/m);
  });

  it.each(Object.keys(COMMAND_HELP))(
    '%s --help: usage, a description, its flags and an example',
    async (command) => {
      const run = await cli([command, '--help']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage:\n {2}agent-compaction /);
      expect(run.stdout).toMatch(/\n\nFlags:\n {2}--/);
      expect(run.stdout).toMatch(new RegExp(`\\n\\nExample:\\n  agent-compaction ${command} \\S+`));
      // Every flag the usage shows is explained.
      const shown = COMMAND_HELP[command]!.usage.match(/--[a-z-]+/g) ?? [];
      for (const flag of shown) expect(run.stdout.split('Flags:')[1]).toContain(flag);
    },
  );
});

describe('unknown commands and flags: one line with the closest valid name', () => {
  it('an unknown command is named, a typo gets its command', async () => {
    const far = await cli(['frobnicate']);
    expect(far.code).toBe(EXIT_CODES.badInput);
    expect(oneLine(far.stderr)).toEqual([
      "error: unknown command 'frobnicate' (commands: estimate, compact, replay, report, status, worker, proxy, mcp); see agent-compaction --help",
    ]);
    const near = await cli(['comapct', 'x.json']);
    expect(oneLine(near.stderr)).toEqual([
      "error: unknown command 'comapct' (did you mean 'compact'?); see agent-compaction --help",
    ]);
    expect(far.stderr + near.stderr).not.toContain('--command');
  });

  it("an unknown flag gets the closest flag of its command, never Node's parser message", async () => {
    const typo = await cli(['compact', 'x.json', '--max-contxt', '3']);
    expect(typo.code).toBe(EXIT_CODES.badInput);
    expect(oneLine(typo.stderr)).toEqual([
      'error: unknown flag --max-contxt for compact (did you mean --max-context?)',
    ]);
    const bogus = await cli(['estimate', 'x.json', '--bogus', '3']);
    expect(oneLine(bogus.stderr)).toEqual([
      'error: unknown flag --bogus for estimate (its flags: --model, --max-context, --format, --config)',
    ]);
    // A flag of another command is unknown here too, rather than silently ignored.
    const other = await cli(['estimate', 'x.json', '--trace', 't.jsonl']);
    expect(oneLine(other.stderr)[0]).toMatch(/^error: unknown flag --trace for estimate/);
    const missing = await cli(['compact', 'x.json', '--model']);
    expect(oneLine(missing.stderr)).toEqual(['error: --model needs a value (--model VALUE)']);
    for (const run of [typo, bogus, other, missing]) {
      expect(run.stderr).not.toMatch(/To specify a positional argument|Unknown option/);
      expect(run.stdout).toBe('');
    }
  });

  it('--version and -v print the version', async () => {
    const long = await cli(['--version']);
    const short = await cli(['-v']);
    expect(long.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect(short.stdout).toBe(long.stdout);
  });
});

describe('the unknown-model warning in the CLI', () => {
  it('names --max-context and suggests only close names', async () => {
    const input = await temp.file('chat.json', chatSession());
    const far = await cli(['estimate', input, '--model', 'my-llm']);
    expect(far.stderr).toContain('unknown model "my-llm"');
    expect(far.stderr).toContain('--max-context');
    expect(far.stderr).not.toContain('maxContextTokens');
    expect(far.stderr).not.toMatch(/closest known model|o1-pro/);
    const near = await cli(['estimate', input, '--model', 'gtp-4o']);
    expect(near.code).toBe(0);
    expect(near.stderr).toContain('closest known model: "gpt-4o"');
    expect(near.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe("the input's own model", () => {
  const body = {
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    system: 'You are terse.',
    messages: [{ role: 'user', content: 'Summarize the payment service design in three bullet points.' }],
  };

  it('counts a request body by its model when --model is not given', async () => {
    const input = await temp.file('claude-body.json', body);
    const run = await cli(['estimate', input]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out.model).toBe('claude-sonnet-4-5');
    expect(out.exact).toBe(false);
    expect(out.tokenizer).toMatch(/x1\.25/);
    expect(out.max_context_tokens).toBe(200_000);
  });

  it("--model wins over the body's model", async () => {
    const input = await temp.file('claude-body-flag.json', body);
    const out = JSON.parse((await cli(['estimate', input, '--model', 'gpt-4o'])).stdout);
    expect(out.model).toBe('gpt-4o');
    expect(out.exact).toBe(true);
  });
});

describe('compact keeps the shape of its input', () => {
  const tools = [{ name: 'read_file', description: 'Reads a file', input_schema: { type: 'object' } }];

  it.each([
    ['{system, messages, tools}', { system: 'You are terse.', messages: anthropicSession(), tools }],
    ['{system, messages}', { system: 'You are terse.', messages: anthropicSession() }],
    ['{messages, tools}', { messages: anthropicSession(), tools }],
    [
      '{model, messages, max_tokens} (other keys kept)',
      { model: 'x', messages: anthropicSession(), max_tokens: 5 },
    ],
  ])('%s comes out with the same keys, in order', async (_name, input) => {
    const run = await cli([
      'compact',
      await temp.file('shape.json', input),
      '--max-context',
      '2500',
      '--force',
    ]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(Object.keys(input));
    for (const [key, value] of Object.entries(input)) if (key !== 'messages') expect(out[key]).toEqual(value);
    expect(JSON.stringify(out.messages)).toContain('<COMPACT-SUMMARY v1>');
  });

  it('a bare array stays an array', async () => {
    const run = await cli(['compact', await temp.file('bare.json', chatSession()), '--max-context', '4000']);
    expect(Array.isArray(JSON.parse(run.stdout))).toBe(true);
  });
});

describe('NO_COLOR', () => {
  const run = async (env: Record<string, string>) => {
    let stderr = '';
    const code = await runCli(['frobnicate'], {
      stdin: Readable.from([]),
      stdout: () => {},
      stderr: (text) => {
        stderr += text;
      },
      env,
      isTTY: true,
    });
    return { code, stderr };
  };

  it('a terminal gets a red "error:"; NO_COLOR (or TERM=dumb) gets plain text', async () => {
    expect((await run({})).stderr).toMatch(/^\u001b\[31merror:\u001b\[0m unknown command/);
    for (const env of [{ NO_COLOR: '1' }, { TERM: 'dumb' }]) {
      const plain = await run(env);
      expect(plain.code).toBe(2);
      expect(plain.stderr).toMatch(/^error: unknown command 'frobnicate'/);
      expect(plain.stderr).not.toContain('\u001b');
    }
  });
});

describe("compact keeps a request body's reply free", () => {
  it("compacts further when the body's max_tokens would not fit beside what it sends without it", async () => {
    const messages = chatSession();
    const window = 20_000;
    const run = async (name: string, input: unknown) => {
      const out = await cli([
        'compact',
        await temp.file(name, input),
        '--model',
        'gpt-4o',
        '--max-context',
        String(window),
      ]);
      expect(out.code).toBe(0);
      return JSON.parse(out.stdout);
    };
    const tokensOf = async (name: string, sent: unknown[]) =>
      JSON.parse((await cli(['estimate', await temp.file(name, sent), '--model', 'gpt-4o'])).stdout).total;
    const plain = await run('no-reply.json', { model: 'gpt-4o', messages });
    // A reply that does not fit beside what is sent without it.
    const max_tokens = window - (await tokensOf('plain-out.json', plain.messages)) + 100;
    const fitted = await run('reply.json', { model: 'gpt-4o', messages, max_tokens });
    expect(fitted.max_tokens).toBe(max_tokens);
    expect((await tokensOf('fitted-out.json', fitted.messages)) + max_tokens).toBeLessThanOrEqual(window);
  });
});
