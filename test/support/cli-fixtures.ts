/** The CLI's test kit: runCli with captured output, temp input files, sessions in each wire format. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';

/** One CLI run: its exit code and what it printed. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in process with `argv` and `stdin`, capturing stdout and stderr. */
export async function cli(
  argv: string[],
  stdin = '',
  env: Readonly<Record<string, string | undefined>> = {},
  cwd?: string,
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdin: Readable.from([Buffer.from(stdin)]),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    env,
    ...(cwd !== undefined ? { cwd } : {}),
  });
  return { code, stdout, stderr };
}

/** A temp directory for one test file (made before its tests, removed after). */
export interface TempFiles {
  /** The path of `name` in the directory. */
  path(name: string): string;
  /** Writes `content` (JSON unless a string) to `name` and returns its path. */
  file(name: string, content: unknown): Promise<string>;
}

/** Registers beforeAll/afterAll hooks making and removing a temp directory. */
export function useTempFiles(): TempFiles {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agent-compaction-cli-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const path = (name: string) => join(dir, name);
  return {
    path,
    async file(name, content) {
      const target = path(name);
      await writeFile(target, typeof content === 'string' ? content : JSON.stringify(content));
      return target;
    },
  };
}

/** `n` distinct words tagged `tag`. */
export const words = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${tag}-${i} src/app/${tag}.ts`).join(' ');

/** A chat session with parallel tool calls, long enough to compact in a 2,500-token window. */
export function chatSession(): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: 'You are a coding agent in repo acme/shop.' },
  ];
  for (let t = 0; t < 8; t++) {
    messages.push({
      role: 'user',
      content: `Turn ${t}: fix ticket SHOP-${100 + t} in src/cart/cart-${t}.ts. ${words(`u${t}`, 20)}`,
    });
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${t}_a`,
          type: 'function',
          function: { name: 'read_file', arguments: `{"path":"src/cart/cart-${t}.ts"}` },
        },
        { id: `call_${t}_b`, type: 'function', function: { name: 'grep', arguments: '{"pattern":"total"}' } },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${t}_a`, content: words(`file${t}`, 30) });
    messages.push({ role: 'tool', tool_call_id: `call_${t}_b`, content: words(`grep${t}`, 20) });
    messages.push({
      role: 'assistant',
      content: `Decided to round totals in cart-${t}.ts because SHOP-${100 + t} needs cents.`,
    });
  }
  return messages;
}

export function responsesSession(): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [
    { type: 'message', role: 'developer', content: 'Never delete files.' },
  ];
  for (let t = 0; t < 8; t++) {
    items.push({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: `Turn ${t}: ${words(`r${t}`, 25)}` }],
    });
    items.push({
      type: 'reasoning',
      id: `rs_${t}`,
      summary: [{ type: 'summary_text', text: `thinking ${t}` }],
    });
    items.push({
      type: 'function_call',
      id: `fc_${t}`,
      call_id: `call_${t}`,
      name: 'read_file',
      arguments: `{"path":"src/r${t}.ts"}`,
    });
    items.push({ type: 'function_call_output', call_id: `call_${t}`, output: words(`out${t}`, 30) });
    items.push({
      type: 'web_search_call',
      id: `ws_${t}`,
      status: 'completed',
      action: { type: 'search', query: `q${t}` },
    });
    items.push({
      type: 'message',
      id: `msg_${t}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: `Done ${t}.` }],
    });
  }
  return items;
}

export function anthropicSession(): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  for (let t = 0; t < 8; t++) {
    messages.push({ role: 'user', content: `Turn ${t}: ${words(`a${t}`, 25)}` });
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading two files for turn ${t}.` },
        { type: 'tool_use', id: `toolu_${t}_a`, name: 'read_file', input: { path: `src/a${t}.ts` } },
        { type: 'tool_use', id: `toolu_${t}_b`, name: 'read_file', input: { path: `src/b${t}.ts` } },
      ],
    });
    messages.push({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: `toolu_${t}_a`, content: words(`ra${t}`, 25) },
        {
          type: 'tool_result',
          tool_use_id: `toolu_${t}_b`,
          content: [{ type: 'text', text: words(`rb${t}`, 25) }],
        },
      ],
    });
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `Turn ${t} done.` }] });
  }
  return messages;
}

/** The `<COMPACT-SUMMARY vN>` tags in the serialized messages. */
export function summaryTexts(messages: unknown[]): string[] {
  return JSON.stringify(messages).match(/<COMPACT-SUMMARY v\d+>/g) ?? [];
}
