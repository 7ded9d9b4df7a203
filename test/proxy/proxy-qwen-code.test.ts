/**
 * Qwen Code (`@qwen-code/qwen-code`, a real agent CLI nobody here wrote) in headless mode,
 * given the proxy as its OpenAI-compatible base URL: the one real client of the proxy's Chat
 * Completions route. The loopback provider server's scripted model makes it write a file and
 * read it back, file after file, through its own `write_file` and `read_file` tools in a temp
 * folder: every request streamed, no session header. What the provider received is judged
 * request by request: tool pairs in Chat order, no orphan result, the system prompt first and
 * unchanged, the task's instruction kept or folded into one `<COMPACT-SUMMARY vN>`, the reply
 * the body asks for inside the 12,000-token window; and the CLI finished its task.
 *
 * Qwen Code is not a dependency: CI installs it (`npm install --no-save @qwen-code/qwen-code`,
 * the last version whose engines field allows Node 20) and sets COMPACT_REQUIRE_AGENT_CLI=1,
 * which turns a missing binary into a failure.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRequest } from '../../src/testing/agent-model-script.js';
import { checkSoundRequest } from '../../src/testing/assert-sound-request.js';
import type { ProviderHandler, RecordedRequest } from '../../src/testing/provider-test-server.js';
import { agentCli, expectProxiedLoop, freshHome, removeHomes, runCli } from './agent-cli-loop.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

const QWEN = agentCli('Qwen Code', 'qwen', 'COMPACT_QWEN_BIN', '@qwen-code/qwen-code');
/** Files written then read back: two tool rounds each. */
const FILES = 10;
const STEPS = 2 * FILES;
const SYSTEM = 'You are a test agent. Use your tools exactly as asked.';
const TASK = 'Write each note file, read it back, and say when all are done.';
const DONE = `All ${FILES} notes written and read.`;
/**
 * The window: its system prompt and tool schemas alone are about 6,000 tokens, so 12,000 leaves
 * room for a few notes, and the raw loop outgrows it several times over.
 */
const WINDOW = 12_000;

/** The content of note `n`: about 500 tokens, distinct per note. */
function noteText(n: number): string {
  return Array.from(
    { length: 30 },
    (_, line) => `note ${n} line ${line}: checksum=${(n * 37 + line * 11) % 101} host=db-${line}`,
  ).join('\n');
}

/** The scripted model: note by note, `write_file` then `read_file` in `folder`, then the answer. */
function notesLoop(folder: string): ProviderHandler {
  let calls = 0;
  return (request) => {
    if (request.endpoint !== 'openai-chat') return undefined;
    const tools = (request.body as { tools?: unknown[] } | undefined)?.tools ?? [];
    if (tools.length === 0) return { text: 'ok' }; // a side request: not the loop
    if (calls >= STEPS) return { text: DONE };
    calls++;
    const n = Math.ceil(calls / 2);
    const path = join(folder, `note-${n}.txt`);
    return {
      toolCalls: [
        calls % 2 === 1
          ? { id: `call_w${n}`, name: 'write_file', arguments: { file_path: path, content: noteText(n) } }
          : { id: `call_r${n}`, name: 'read_file', arguments: { file_path: path } },
      ],
    };
  };
}

/** Runs `qwen` headless against `baseUrl` in `home`; resolves with its exit code and output. */
async function runQwen(baseUrl: string, home: string) {
  // No update checks, usage statistics or chat files: nothing leaves the machine or outlives HOME.
  await mkdir(join(home, '.qwen'), { recursive: true });
  const settings = {
    general: { enableAutoUpdate: false, disableAutoUpdate: true, chatRecording: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    model: { skipLoopDetection: true, skipNextSpeakerCheck: true },
  };
  await writeFile(join(home, '.qwen', 'settings.json'), JSON.stringify(settings));
  const args = [
    '--auth-type',
    'openai',
    '--openai-base-url',
    `${baseUrl}/v1`,
    '--openai-api-key',
    'sk-qwen-test',
    '-m',
    'gpt-4o',
    '--approval-mode',
    'yolo',
    '--system-prompt',
    SYSTEM,
    '--core-tools',
    'read_file',
    'write_file',
    '-o',
    'json',
    TASK,
  ];
  // Its default reply room (8,000 tokens) would leave no room in the window: a smaller one, as a user sets it.
  return runCli(QWEN.bin, args, home, { QWEN_CODE_MAX_OUTPUT_TOKENS: '1024', NO_COLOR: '1' });
}

type ChatMessage = { role: string; content?: unknown; tool_call_id?: string };

/** The messages of a recorded Chat request. */
const messagesOf = (request: RecordedRequest) => (request.body as { messages: ChatMessage[] }).messages;

/** The text of a Chat message's content (a string or text parts). */
function textOf(message: ChatMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part as { text?: unknown }).text ?? '').join('');
}

/** What breaks the rules of the file's comment in one loop request, beside {@link checkSoundRequest}. */
function loopProblems(request: RecordedRequest, system: ChatMessage): string[] {
  const messages = messagesOf(request);
  const problems: string[] = [];
  if (JSON.stringify(messages[0]) !== JSON.stringify(system)) problems.push('system prompt not kept first');
  const texts = messages.filter((m) => m.role === 'user').map(textOf);
  if (!texts.some((text) => text.includes(TASK) || /<COMPACT-SUMMARY v\d+>/.test(text)))
    problems.push('the task is neither kept nor summarized');
  return problems.map((problem) => `#${request.seq}: ${problem}`);
}

let running: ProxiedProvider | undefined;
afterAll(async () => {
  await running?.close();
  await removeHomes();
});

describe.skipIf(!QWEN.run)('Qwen Code through the proxy (Chat Completions)', () => {
  it('a long file tool loop: every request sound and under 12,000 tokens, one session', async () => {
    QWEN.expectInstalled();
    const home = await freshHome('proxy-qwen-home-');
    running = await startProxiedProvider(notesLoop(home), { manager: { maxContextTokens: WINDOW } });
    const { code, out } = await runQwen(running.proxy.url, home);
    expect(code, out.slice(-2000)).toBe(0);
    expect(out).toContain(DONE);
    // Its tools did the work: every note on disk, and each one read back reached the provider.
    const loop = running.provider.requests.filter(
      (request) => request.endpoint === 'openai-chat' && readRequest(request).tools.length > 0,
    );
    for (let n = 1; n <= FILES; n++)
      expect(await readFile(join(home, `note-${n}.txt`), 'utf8')).toBe(noteText(n));
    const last = messagesOf(loop.at(-1)!).at(-1)!;
    expect(last).toMatchObject({ role: 'tool', tool_call_id: `call_r${FILES}` });
    // The newest message as the CLI sent it: each note read back reached the provider whole.
    for (const request of loop) {
      const newest = messagesOf(request).at(-1)!;
      const read = /^call_r(\d+)$/.exec(newest.tool_call_id ?? '');
      if (read) expect(textOf(newest)).toContain(noteText(Number(read[1])));
    }
    const system = messagesOf(loop[0]!)[0]!;
    expect(system.role).toBe('system');
    expect(textOf(system)).toContain(SYSTEM);
    const violations = loop.flatMap((request) => [
      ...checkSoundRequest({
        request: request.body,
        format: 'openai-chat',
        maxContextTokens: running!.manager.maxContextTokens,
      }).map((violation) => `#${request.seq}: [${violation.rule}] ${violation.message}`),
      ...loopProblems(request, system),
    ]);
    expect(violations).toEqual([]);
    expect(loop.some((request) => /<COMPACT-SUMMARY v\d+>/.test(request.rawBody))).toBe(true);
    // The summary names the file each folded read was of (its `file_path`), not `read_file()`.
    const summaries = loop
      .map((request) => request.rawBody)
      .filter((raw) => raw.includes('<COMPACT-SUMMARY'));
    expect(summaries.at(-1)).toContain(`read_file(${join(home, 'note-1.txt')})`);
    expectProxiedLoop(running, { endpoint: 'openai-chat', steps: STEPS });
  });
});
