/**
 * The end-to-end check: an agent loop (the real `openai` SDK over HTTP to a loopback
 * server playing a scripted model, the real CompactManager on a 4k window) where the fact
 * needed at the end was only in a tool output cleared long before. The model recalls it by
 * reference, then by query, and answers with it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import type { StorageAdapter } from '../core/archive/storage-adapter.js';
import { CompactManager } from '../core/manager/compact-manager.js';
import type { CompactPolicy } from '../core/policy.js';
import { fsStorage } from '../storage/fs/fs-storage.js';
import { memoryStorage } from '../storage/memory/memory-storage.js';
import { readRequest, toolPairProblems } from '../testing/agent-model-script.js';
import {
  type ProviderTestServer,
  type ScriptedReply,
  startProviderTestServer,
} from '../testing/provider-test-server.js';
import { RecallArchive } from './recall-archive.js';
import { RECALL_INPUT_SCHEMA_STRICT, RECALL_TOOL_DESCRIPTION, runRecallTool } from './recall-tool.js';

const TENANT = '3f9c2b1e-7a4d-4c8e-9b21-5d6e0f1a2b3c';
const AWS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const SESSION = 'agent-loop-1';
const QUESTION = 'Final check: which tenant id did the psql query show as suspended?';
const CLEARED_BASH = /\[cleared: bash output, [^\]]*; recall "([a-z]+-[0-9a-z]+)"\]/;
/** The model reads the id off the row that says `suspended`. */
const SUSPENDED_ROW = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}) \| suspended/;

const TOOLS: OpenAI.Chat.Completions.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'bash',
      description: 'Run a shell command.',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'read_file',
      description: 'Read a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'recall',
      description: RECALL_TOOL_DESCRIPTION,
      parameters: RECALL_INPUT_SCHEMA_STRICT as unknown as Record<string, unknown>,
      strict: true,
    },
  },
];

/** The psql output that carries the fact, padded like a real result table. */
function psqlOutput(): string {
  const rows = Array.from(
    { length: 30 },
    (_, i) => ` ${String(i).padStart(8, '0')}-0000-4000-8000-${String(i).padStart(12, '0')} | active`,
  );
  rows.splice(17, 0, ` ${TENANT} | suspended`);
  return `-- connected with aws_access_key_id=${AWS_KEY}\n                  id                  |  status\n${rows.join('\n')}\n(31 rows)`;
}

function fileListing(path: string, lines: number): string {
  return Array.from(
    { length: lines },
    (_, i) => `${i + 1}: export const value${i} = compute('${path}', ${i});`,
  ).join('\n');
}

/** What the loop saw, for the assertions. */
interface Trace {
  recallResults: string[];
  /** The ref the bash placeholder named, when it was still in view at the question. */
  placeholderRef?: string | undefined;
  /** The ref of the top search hit the model followed (when it searched first). */
  followedRef?: string | undefined;
  order?: ('ref' | 'query')[];
  factInViewAtQuestion?: boolean;
  answer?: string;
}

/**
 * The scripted model: works through a task with many tool calls (always id `call_0`), then,
 * asked the final question, recalls the cleared psql output by the ref its placeholder names,
 * then searches by query, then answers with what recall returned.
 */
function scriptedModel(trace: Trace) {
  return (request: Parameters<typeof readRequest>[0]): ScriptedReply | undefined => {
    if (request.endpoint !== 'openai-chat') return undefined;
    const view = readRequest(request);
    const lastUser = view.entries.findLastIndex((entry) => entry.kind === 'user');
    const userText = view.entries[lastUser]?.text ?? '';
    const after = view.entries.slice(lastUser + 1).filter((entry) => entry.kind === 'tool_result');
    const call = (name: string, args: Record<string, unknown>): ScriptedReply => ({
      toolCalls: [{ id: 'call_0', name, arguments: args }],
    });
    if (userText !== QUESTION) {
      const step = Number(/step (\d+)/.exec(userText)?.[1] ?? 0);
      if (after.length === 0)
        return step === 0
          ? call('bash', { command: 'psql -c "select id, status from tenants"' })
          : call('read_file', { path: `src/module-${step}.ts` });
      if (after.length === 1 && step > 0) return call('read_file', { path: `src/module-${step}-b.ts` });
      return { text: `Step ${step} done.` };
    }
    const all = view.entries.map((entry) => entry.text).join('\n');
    const byRef = (ref: string, page: number | null = null) =>
      call('recall', { ref, query: null, page, page_chars: null, limit: null });
    const byQuery = () =>
      call('recall', { ref: null, query: 'suspended tenant psql', page: null, page_chars: null, limit: 3 });
    if (after.length === 0) {
      trace.factInViewAtQuestion = all.includes(TENANT);
      trace.placeholderRef = CLEARED_BASH.exec(all)?.[1];
      // With the placeholder in view: its ref first. Without (folded into the summary): search first.
      trace.order = trace.placeholderRef ? ['ref', 'query'] : ['query', 'ref'];
      return trace.placeholderRef ? byRef(trace.placeholderRef) : byQuery();
    }
    trace.recallResults.push(after.at(-1)!.text);
    if (after.length === 1) {
      if (trace.placeholderRef) return byQuery();
      // The top hit's ref and the page its passage starts on.
      const top = /ref "([a-z]+-[0-9a-z]+)" \([^)]*page (\d+)\)/.exec(after[0]!.text);
      trace.followedRef = top?.[1];
      return top ? byRef(top[1]!, Number(top[2])) : { text: 'Nothing found.' };
    }
    const found = after.map((entry) => SUSPENDED_ROW.exec(entry.text)?.[1]);
    trace.answer = found[0] === found[1] ? `The suspended tenant is ${found[0]}.` : 'The recalls disagree.';
    return { text: trace.answer };
  };
}

let server: ProviderTestServer | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await server?.close();
  await cleanup?.();
  server = undefined;
  cleanup = undefined;
});

/** The shape of the run: how many work steps, how long each file read is. */
interface LoopOptions {
  steps: number;
  listingLines: number;
  policy?: Partial<CompactPolicy>;
}

async function runLoop(storage: StorageAdapter, options: LoopOptions) {
  // Every old tool output cleared at the first compaction (cacheAware), so the fact is long gone.
  const policy = { hardCapBuffer: 300, maxSummaryTokens: 400, cacheAware: true, ...options.policy };
  const trace: Trace = { recallResults: [] };
  server = await startProviderTestServer({ handler: scriptedModel(trace) });
  const client = new OpenAI({ apiKey: 'test-key', baseURL: server.openaiBaseURL, maxRetries: 0 });
  const recall = new RecallArchive(storage, { pageChars: 1500 });
  const manager = new CompactManager({
    model: 'gpt-4o',
    maxContextTokens: 4096,
    storage: recall.storage,
    policy,
  });
  const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a coding agent. Use recall to read back cleared tool outputs.' },
  ];
  const indexedBeforeQuery: string[][] = [];
  const users = [
    ...Array.from({ length: options.steps }, (_, step) => `Continue the audit, step ${step}.`),
    QUESTION,
  ];
  for (const user of users) {
    history.push({ role: 'user', content: user });
    for (let guard = 0; guard < 6; guard++) {
      const messages = await manager.preflight(SESSION, history, { tools: TOOLS });
      const reply = await client.chat.completions.create({ model: 'gpt-4o', messages, tools: TOOLS });
      const message = reply.choices[0]!.message;
      history.push(message as OpenAI.Chat.Completions.ChatCompletionMessageParam);
      if (!message.tool_calls?.length) break;
      for (const toolCall of message.tool_calls) {
        if (toolCall.type !== 'function') continue;
        const args = JSON.parse(toolCall.function.arguments) as Record<string, unknown>;
        let content: string;
        if (toolCall.function.name === 'recall') {
          if (args.query) indexedBeforeQuery.push(recall.indexedSessions());
          content = (await runRecallTool(recall, SESSION, args)).text;
        } else if (toolCall.function.name === 'bash') content = psqlOutput();
        else content = fileListing(String(args.path), options.listingLines);
        history.push({ role: 'tool', tool_call_id: toolCall.id, content });
      }
    }
  }
  await manager.shutdown();
  const requests = server.requests.map(readRequest);
  return { trace, requests, indexedBeforeQuery, recall };
}

const storages: [string, () => Promise<StorageAdapter>][] = [
  ['memory', async () => memoryStorage()],
  [
    'fs',
    async () => {
      const root = await mkdtemp(join(tmpdir(), 'recall-loop-'));
      cleanup = () => rm(root, { recursive: true, force: true });
      return fsStorage({ path: root });
    },
  ],
];

function expectSound(requests: ReturnType<typeof readRequest>[]) {
  // Every request kept its tool pairs (call_0 reused every round).
  for (const view of requests) expect(toolPairProblems(view)).toEqual([]);
}

describe.each(storages)('recall in an agent loop (%s archive)', (_name, makeStorage) => {
  it('brings back a fact from a tool output cleared long before, by its placeholder ref then by query, redacted', async () => {
    // Clearing alone keeps this run under target for a while: the placeholder is still in view at the end.
    const { trace, requests, indexedBeforeQuery } = await runLoop(await makeStorage(), {
      steps: 10,
      listingLines: 12,
      // The fact's output must be cleared by the question: the newest 3 results kept, as before
      // issue 47's defaults (4 kept, the cost trigger) moved when this short run clears.
      policy: { targetPct: 0.7, clearKeepRecent: 3, costTrigger: false },
    });
    expectSound(requests);
    expect(trace.factInViewAtQuestion).toBe(false);
    expect(trace.order).toEqual(['ref', 'query']);
    const ref = trace.placeholderRef!;
    expect(ref).toMatch(/^tool-[0-9a-z]+$/);
    const [byRef, byQuery] = trace.recallResults;
    // By ref: the whole original, secrets redacted as archived.
    expect(byRef).toContain(`[recall ref "${ref}": output of tool "bash"`);
    expect(byRef).toContain(`${TENANT} | suspended`);
    expect(byRef).not.toContain(AWS_KEY);
    expect(byRef).toContain('aws_access_key_id=<REDACTED>');
    // By query: the passage with the fact and its ref; the index was built only for this query.
    expect(indexedBeforeQuery).toEqual([[]]);
    expect(byQuery).toContain(`ref "${ref}"`);
    expect(byQuery).toContain(TENANT);
    expect(byQuery).not.toContain(AWS_KEY);
    expect(trace.answer).toBe(`The suspended tenant is ${TENANT}.`);
  });

  it('finds the fact by query after its placeholder was folded into the summary, then reads the hit by ref', async () => {
    const { trace, requests } = await runLoop(await makeStorage(), {
      steps: 24,
      listingLines: 25,
      policy: { targetPct: 0.7 },
    });
    expectSound(requests);
    expect(trace.factInViewAtQuestion).toBe(false);
    expect(trace.placeholderRef).toBeUndefined();
    expect(trace.order).toEqual(['query', 'ref']);
    const [byQuery, byRef] = trace.recallResults;
    expect(byQuery).toContain(TENANT);
    expect(trace.followedRef).toMatch(/^(tool|sum)-[0-9a-z]+$/);
    expect(byRef).toContain(`[recall ref "${trace.followedRef}"`);
    expect(byRef).toContain(`${TENANT} | suspended`);
    expect(`${byQuery}${byRef}`).not.toContain(AWS_KEY);
    expect(trace.answer).toBe(`The suspended tenant is ${TENANT}.`);
  });
});
