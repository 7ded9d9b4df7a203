/**
 * Random agent sessions for the property tests, described abstractly (steps) and rendered
 * into the three wire formats, plus an independent reading of the wire formats (calls,
 * results, text) used to check the manager's output without relying on its own codecs.
 */
import fc from 'fast-check';

/** The wire formats under test. */
export type WireFormat = 'openai-chat' | 'openai-responses' | 'anthropic';

/** One abstract step of a session. */
export type SessionStep =
  | { kind: 'pinned-role'; role: 'system' | 'developer'; words: number }
  | { kind: 'user'; words: number; protected: boolean; parts: boolean; repeat?: boolean }
  | { kind: 'assistant'; words: number; protected: boolean; reasoning: boolean }
  | {
      kind: 'tools';
      /** Words of each result; its length is the number of parallel calls. */
      results: number[];
      /** -1: nothing protected; 0: the call message; k: the k-th result. */
      protectedAt: number;
      reasoning: boolean;
      unknownItem: boolean;
      /** Words of assistant text sent with the calls (0: none). */
      text: number;
      /** Anthropic: all results in one user message (else one message each). */
      resultsInOneMessage: boolean;
    }
  | { kind: 'unknown'; words: number };

const WORDS = [
  'the',
  'session',
  'token',
  'src/auth/session.ts',
  'validated',
  'against',
  'store',
  'https://example.com/docs/rotation',
  'rotated',
  'every',
  'fifteen',
  'minutes',
  'feature/token-rotation',
  'cache',
  'keeps',
  'hot',
  'keys',
  'AUTH-4521',
  'gateway',
  'worker',
  'pool',
  'drains',
  '120 ms',
  'slowly',
  'under',
  'load.',
  'Decided',
  'because',
  'TODO:',
  'must',
  'never',
  '42 MB',
];

/** Deterministic text of `words` words, tagged with the message's unique id. */
export function wordsOf(uid: number, words: number): string {
  const out = [`[u${uid}]`];
  for (let i = 0; i < words; i++) out.push(WORDS[(uid * 31 + i * 7 + ((i * i) % 13)) % WORDS.length]!);
  return out.join(' ');
}

const stepArbitrary = (maxWords: number, maxResultWords: number): fc.Arbitrary<SessionStep> =>
  fc.oneof(
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('pinned-role' as const),
        role: fc.constantFrom('system' as const, 'developer' as const),
        words: fc.integer({ min: 1, max: 120 }),
      }),
    },
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('user' as const),
        words: fc.integer({ min: 1, max: maxWords }),
        protected: fc.boolean(),
        parts: fc.boolean(),
        repeat: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('assistant' as const),
        words: fc.integer({ min: 1, max: maxWords }),
        protected: fc.boolean(),
        reasoning: fc.boolean(),
      }),
    },
    {
      weight: 6,
      arbitrary: fc
        .record({
          kind: fc.constant('tools' as const),
          results: fc.array(fc.integer({ min: 1, max: maxResultWords }), { minLength: 1, maxLength: 4 }),
          protectedAt: fc.integer({ min: -6, max: 4 }),
          reasoning: fc.boolean(),
          unknownItem: fc.boolean(),
          text: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 })),
          resultsInOneMessage: fc.boolean(),
        })
        .map((s) => ({
          ...s,
          protectedAt: s.protectedAt > s.results.length ? -1 : Math.max(-1, s.protectedAt),
        })),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('unknown' as const), words: fc.integer({ min: 1, max: 80 }) }),
    },
  );

/** Sessions of 1..`maxSteps` steps (protected messages are rarer than the boolean suggests: see below). */
export function sessionArbitrary(
  options: { maxSteps?: number; maxWords?: number; maxResultWords?: number } = {},
): fc.Arbitrary<SessionStep[]> {
  const { maxSteps = 50, maxWords = 250, maxResultWords = 1200 } = options;
  return fc
    .array(stepArbitrary(maxWords, maxResultWords), { minLength: 1, maxLength: maxSteps })
    .map((steps) =>
      // Keep protected messages a minority (as in real sessions), deterministically.
      steps.map((step, i) => {
        if ((step.kind === 'user' || step.kind === 'assistant') && step.protected && i % 3 !== 0) {
          return { ...step, protected: false };
        }
        if (step.kind === 'tools' && step.protectedAt >= 0 && i % 4 !== 0)
          return { ...step, protectedAt: -1 };
        return step;
      }),
    );
}

/** A rendered session: the messages (each a group of one step), plus a separate system prompt. */
export interface RenderedSession {
  format: WireFormat;
  messages: Record<string, unknown>[];
  /** Index of the first message of each step, and one past the end. */
  stepStarts: number[];
  /** Anthropic: the system prompt built from `pinned-role` steps. */
  system?: string;
  tools: unknown[];
}

const protectedMeta = (uid: number) => ({ protected: true, label: `Protected ${uid}` });

/** Renders abstract steps into one wire format. Every message's text is unique. */
export function renderSession(
  format: WireFormat,
  steps: readonly SessionStep[],
  toolCount = 2,
): RenderedSession {
  const messages: Record<string, unknown>[] = [];
  const stepStarts: number[] = [];
  const systemParts: string[] = [];
  let uid = 0;
  const next = () => ++uid;
  for (const step of steps) {
    stepStarts.push(messages.length);
    switch (step.kind) {
      case 'pinned-role': {
        const text = wordsOf(next(), step.words);
        if (format === 'anthropic') systemParts.push(text);
        else if (format === 'openai-chat') messages.push({ role: step.role, content: text });
        else messages.push({ type: 'message', role: step.role, content: text });
        break;
      }
      case 'user': {
        const id = next();
        // Some user messages repeat word for word ("continue"), as in real agent sessions (never
        // protected ones: the checker could not tell equal pinned and unpinned copies apart).
        const text = step.repeat && !step.protected ? 'continue' : wordsOf(id, step.words);
        const meta = step.protected ? { meta: protectedMeta(id) } : {};
        if (format === 'openai-chat')
          messages.push({ role: 'user', content: step.parts ? [{ type: 'text', text }] : text, ...meta });
        else if (format === 'openai-responses') {
          messages.push(
            step.parts
              ? { type: 'message', role: 'user', content: [{ type: 'input_text', text }], ...meta }
              : { role: 'user', content: text, ...meta },
          );
        } else
          messages.push({ role: 'user', content: step.parts ? [{ type: 'text', text }] : text, ...meta });
        break;
      }
      case 'assistant': {
        const id = next();
        const text = wordsOf(id, step.words);
        const meta = step.protected ? { meta: protectedMeta(id) } : {};
        if (format === 'openai-chat') messages.push({ role: 'assistant', content: text, ...meta });
        else if (format === 'openai-responses') {
          if (step.reasoning) {
            messages.push({
              type: 'reasoning',
              id: `rs_${id}`,
              summary: [{ type: 'summary_text', text: wordsOf(next(), 12) }],
              encrypted_content: `enc${id}`,
            });
          }
          messages.push({
            type: 'message',
            id: `msg_${id}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text, annotations: [] }],
            ...meta,
          });
        } else {
          const blocks: unknown[] = [];
          if (step.reasoning)
            blocks.push({ type: 'thinking', thinking: wordsOf(next(), 12), signature: `sig${id}` });
          blocks.push({ type: 'text', text });
          messages.push({ role: 'assistant', content: blocks, ...meta });
        }
        break;
      }
      case 'tools': {
        const id = next();
        const calls = step.results.map((_, k) => ({
          id: format === 'anthropic' ? `toolu_${id}_${k}` : `call_${id}_${k}`,
          name: `tool_${k % toolCount}`,
          args: { path: `src/module_${id}_${k}.ts`, query: wordsOf(id, 3) },
        }));
        const callMeta = step.protectedAt === 0 ? { meta: protectedMeta(id) } : {};
        const resultMeta = (k: number) => (step.protectedAt === k + 1 ? { meta: protectedMeta(id) } : {});
        const outputs = step.results.map(
          (words, k) => `result of ${calls[k]!.id}: ${wordsOf(next(), words)}`,
        );
        if (format === 'openai-chat') {
          messages.push({
            role: 'assistant',
            content: step.text > 0 ? wordsOf(next(), step.text) : null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: JSON.stringify(c.args) },
            })),
            ...callMeta,
          });
          calls.forEach((c, k) => {
            messages.push({ role: 'tool', tool_call_id: c.id, content: outputs[k]!, ...resultMeta(k) });
          });
        } else if (format === 'openai-responses') {
          if (step.unknownItem) {
            const u = next();
            messages.push({
              type: 'web_search_call',
              id: `ws_${u}`,
              status: 'completed',
              action: { type: 'search', query: wordsOf(u, 4) },
            });
          }
          if (step.text > 0) {
            const t = next();
            messages.push({
              type: 'message',
              id: `msg_${t}`,
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: wordsOf(t, step.text), annotations: [] }],
            });
          }
          if (step.reasoning) {
            messages.push({
              type: 'reasoning',
              id: `rs_${id}`,
              summary: [{ type: 'summary_text', text: wordsOf(next(), 10) }],
              encrypted_content: `enc${id}`,
            });
          }
          calls.forEach((c, k) => {
            messages.push({
              type: 'function_call',
              id: `fc_${id}_${k}`,
              call_id: c.id,
              name: c.name,
              arguments: JSON.stringify(c.args),
              status: 'completed',
              ...(k === 0 ? callMeta : {}),
            });
          });
          calls.forEach((c, k) => {
            messages.push({
              type: 'function_call_output',
              call_id: c.id,
              output: outputs[k]!,
              ...resultMeta(k),
            });
          });
        } else {
          const blocks: unknown[] = [];
          if (step.reasoning)
            blocks.push({ type: 'thinking', thinking: wordsOf(next(), 10), signature: `sig${id}` });
          if (step.text > 0) blocks.push({ type: 'text', text: wordsOf(next(), step.text) });
          for (const c of calls) blocks.push({ type: 'tool_use', id: c.id, name: c.name, input: c.args });
          messages.push({ role: 'assistant', content: blocks, ...callMeta });
          if (step.resultsInOneMessage) {
            const protectedResult = step.protectedAt > 0 ? { meta: protectedMeta(id) } : {};
            const content: unknown[] = calls.map((c, k) => ({
              type: 'tool_result',
              tool_use_id: c.id,
              content: outputs[k]!,
              ...(k === 1 ? { is_error: true } : {}),
            }));
            if (step.unknownItem) content.push({ type: 'text', text: wordsOf(next(), 5) });
            messages.push({ role: 'user', content, ...protectedResult });
          } else {
            calls.forEach((c, k) => {
              messages.push({
                role: 'user',
                content: [
                  { type: 'tool_result', tool_use_id: c.id, content: [{ type: 'text', text: outputs[k]! }] },
                ],
                ...resultMeta(k),
              });
            });
          }
        }
        break;
      }
      case 'unknown': {
        const u = next();
        if (format === 'openai-chat')
          messages.push({ role: 'assistant', content: [{ type: 'text', text: wordsOf(u, step.words) }] });
        else if (format === 'openai-responses')
          messages.push({ type: 'x_custom_item', id: `x_${u}`, data: { note: wordsOf(u, step.words) } });
        else {
          messages.push({
            role: 'user',
            content: [
              { type: 'text', text: wordsOf(u, step.words) },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: `iVBORw0KGgo${u}` } },
            ],
          });
        }
        break;
      }
    }
  }
  stepStarts.push(messages.length);
  const tools = toolSchemas(format, toolCount);
  const rendered: RenderedSession = { format, messages, stepStarts, tools };
  if (systemParts.length > 0) rendered.system = systemParts.join('\n');
  return rendered;
}

function toolSchemas(format: WireFormat, count: number): unknown[] {
  const out: unknown[] = [];
  for (let k = 0; k < count; k++) {
    const parameters = {
      type: 'object',
      properties: { path: { type: 'string', description: 'file path' }, query: { type: 'string' } },
      required: ['path'],
    };
    const description = `Tool number ${k}: reads or searches the repository.`;
    if (format === 'openai-chat')
      out.push({ type: 'function', function: { name: `tool_${k}`, description, parameters } });
    else if (format === 'openai-responses')
      out.push({ type: 'function', name: `tool_${k}`, description, parameters });
    else out.push({ name: `tool_${k}`, description, input_schema: parameters });
  }
  return out;
}

/** What a wire message means, read independently of the library's codecs. */
export interface WireFacts {
  calls: string[];
  results: string[];
  text: string;
  reasoning: boolean;
  role: string;
}

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) =>
      typeof p === 'string'
        ? p
        : p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
          ? (p as { text: string }).text
          : '',
    )
    .join('\n');
}

/** Reads calls, results and text of one wire message. */
export function wireFacts(format: WireFormat, message: unknown): WireFacts {
  const m = message as Record<string, unknown>;
  if (format === 'openai-chat') {
    const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as { id: string }[]).map((c) => c.id) : [];
    const results = m.role === 'tool' ? [String(m.tool_call_id)] : [];
    return { calls, results, text: partsText(m.content), reasoning: false, role: String(m.role) };
  }
  if (format === 'openai-responses') {
    const type = m.type ?? 'message';
    if (type === 'function_call')
      return { calls: [String(m.call_id)], results: [], text: '', reasoning: false, role: 'assistant' };
    if (type === 'function_call_output')
      return { calls: [], results: [String(m.call_id)], text: '', reasoning: false, role: 'tool' };
    if (type === 'reasoning') return { calls: [], results: [], text: '', reasoning: true, role: 'assistant' };
    if (type === 'message')
      return { calls: [], results: [], text: partsText(m.content), reasoning: false, role: String(m.role) };
    return { calls: [], results: [], text: '', reasoning: false, role: 'assistant' };
  }
  const calls: string[] = [];
  const results: string[] = [];
  if (Array.isArray(m.content)) {
    for (const block of m.content as Record<string, unknown>[]) {
      if (block.type === 'tool_use') calls.push(String(block.id));
      if (block.type === 'tool_result') results.push(String(block.tool_use_id));
    }
  }
  return { calls, results, text: partsText(m.content), reasoning: false, role: String(m.role) };
}

/** The summary marker every summary message's text starts with. */
export const SUMMARY_PREFIX = '<COMPACT-SUMMARY v';

/** A copy without `meta` (what the provider should receive). */
export function withoutMeta(message: unknown): unknown {
  if (message === null || typeof message !== 'object' || !('meta' in message)) return message;
  const { meta: _meta, ...rest } = message as Record<string, unknown>;
  return rest;
}

/** Recursively freezes a value (the manager must never mutate the caller's input). */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

/** The pinned messages of a raw history: never-prune roles, protected ones, and their whole tool groups. */
export function pinnedIndices(
  format: WireFormat,
  raw: readonly unknown[],
  rolesNeverPrune: readonly string[],
): Set<number> {
  const facts = raw.map((m) => wireFacts(format, m));
  const pinned = new Set<number>();
  raw.forEach((m, i) => {
    const meta = (m as { meta?: { protected?: unknown } }).meta;
    if (rolesNeverPrune.includes(facts[i]!.role) || meta?.protected === true) pinned.add(i);
  });
  const direct = new Set(pinned);
  const ids = new Set<string>();
  let changed = true;
  while (changed) {
    changed = false;
    for (const i of pinned) for (const id of [...facts[i]!.calls, ...facts[i]!.results]) ids.add(id);
    facts.forEach((f, i) => {
      if (!pinned.has(i) && [...f.calls, ...f.results].some((id) => ids.has(id))) {
        pinned.add(i);
        changed = true;
      }
    });
    // A model turn (reasoning, text, calls) and the results that answer it are pinned whole.
    // (Pinned plain text, with no calls, results or reasoning, pins only itself.)
    const active = (i: number) =>
      (facts[i]!.reasoning && direct.has(i)) || facts[i]!.calls.length > 0 || facts[i]!.results.length > 0;
    for (const round of modelRounds(facts)) {
      // Reasoning right before a pinned message stays with it.
      for (let k = round.length - 1; k > 0; k--) {
        const i = round[k]!;
        const prev = round[k - 1]!;
        if (pinned.has(i) && !pinned.has(prev) && facts[prev]!.reasoning && prev === i - 1) {
          pinned.add(prev);
          changed = true;
        }
      }
      if (round.some((i) => pinned.has(i) && active(i)) && round.some((i) => !pinned.has(i))) {
        for (const i of round) pinned.add(i);
        changed = true;
      }
    }
  }
  return pinned;
}

/**
 * Rounds, computed independently of the library: a round opens at a model-side entry (an
 * assistant message or item, a reasoning item) that follows anything else, takes the
 * model-side entries after it, then the tool results that follow.
 */
function modelRounds(facts: readonly ReturnType<typeof wireFacts>[]): number[][] {
  const rounds: number[][] = [];
  let current: number[] | undefined;
  let inModel = false;
  facts.forEach((f, i) => {
    const modelSide = f.reasoning || (f.role === 'assistant' && f.results.length === 0);
    if (modelSide) {
      if (!inModel) {
        current = [];
        rounds.push(current);
      }
      inModel = true;
      current!.push(i);
    } else if (f.results.length > 0 && current) {
      inModel = false;
      current.push(i);
    } else {
      inModel = false;
      current = undefined;
    }
  });
  return rounds;
}

/** Everything the invariant check needs. */
export interface OutputCheck {
  format: WireFormat;
  /** The whole raw history so far, with `meta` (messages are unique by content). */
  raw: readonly unknown[];
  output: readonly unknown[];
  rolesNeverPrune: readonly string[];
}

/** What {@link checkOutput} found out (for statistics). */
export interface OutputShape {
  summaries: number;
  summaryText?: string;
  /** Raw indices of the output messages (-1 for the summary). */
  rawIndices: number[];
}

/**
 * Checks the structural invariants of one output against the raw history. Throws an
 * Error naming the broken invariant.
 */
export function checkOutput(check: OutputCheck): OutputShape {
  const { format, raw, output } = check;
  const fail = (what: string): never => {
    throw new Error(
      `${what}\noutput: ${JSON.stringify(output).slice(0, Number(process.env.FC_CAUSE_CHARS ?? 3000))}\nraw: ${JSON.stringify(raw).slice(0, Number(process.env.FC_CAUSE_CHARS ?? 3000))}`,
    );
  };
  // Equal messages (real transcripts repeat some) are matched to their raw positions in order.
  const keyOf = new Map<string, number[]>();
  raw.forEach((m, i) => {
    const key = JSON.stringify(withoutMeta(m));
    keyOf.set(key, [...(keyOf.get(key) ?? []), i]);
  });
  let summaries = 0;
  let summaryAt = -1;
  let summaryText: string | undefined;
  // Matched from the end: of equal messages, the ones kept are the latest.
  const rawIndices: number[] = new Array(output.length);
  const rawIndicesTaken = new Set<number>();
  for (let k = output.length - 1; k >= 0; k--) {
    const m = output[k];
    if (m !== null && typeof m === 'object' && Object.hasOwn(m, 'meta'))
      fail(`meta leaked into output[${k}]`);
    const facts = wireFacts(format, m);
    if (facts.text.startsWith(SUMMARY_PREFIX)) {
      summaries++;
      summaryAt = k;
      summaryText = facts.text;
      rawIndices[k] = -1;
      continue;
    }
    const candidates = keyOf.get(JSON.stringify(m));
    let index: number | undefined;
    while (candidates && candidates.length > 0 && index === undefined) {
      const i = candidates.pop()!;
      if (!rawIndicesTaken.has(i)) index = i;
    }
    // A message the cascade rewrote (a cleared tool result, shortened arguments, a cut) keeps
    // its structure (role, call ids, result ids) and carries the library's marker.
    const text = JSON.stringify(m);
    if (index === undefined && (text.includes('[agent-compaction: ') || text.includes('[cleared: '))) {
      const shape = (x: unknown) => {
        const f = wireFacts(format, x);
        return JSON.stringify([f.role, f.calls, f.results]);
      };
      const wanted = shape(m);
      for (let i = raw.length - 1; i >= 0; i--) {
        if (rawIndicesTaken.has(i) || shape(raw[i]) !== wanted) continue;
        index = i;
        break;
      }
    }
    if (index !== undefined) rawIndicesTaken.add(index);
    if (index === undefined) {
      fail(
        `output[${k}] is neither a summary nor an input message unchanged (minus meta): ${JSON.stringify(m).slice(0, 300)}`,
      );
    }
    rawIndices[k] = index!;
  }
  if (summaries > 1) fail(`${summaries} summary messages in the output`);
  if (new Set(rawIndices.filter((i) => i >= 0)).size !== rawIndices.filter((i) => i >= 0).length)
    fail('a message appears twice in the output');

  const rawFacts0 = (i: number) => wireFacts(format, raw[i]).role;
  // Pinned messages: all present, unchanged (checked by the key lookup), in original order.
  const pinned = pinnedIndices(format, raw, check.rolesNeverPrune);
  const outPinned = rawIndices.filter((i) => pinned.has(i));
  for (const i of pinned)
    if (!outPinned.includes(i)) fail(`pinned raw message ${i} is missing from the output`);
  for (let k = 1; k < outPinned.length; k++)
    if (outPinned[k]! < outPinned[k - 1]!) fail('pinned messages out of their original order');
  // The user's own text messages may be kept verbatim before the summary, beside the pinned
  // ones (issue 20: user text is ranked first): user role, plain text, no tool result.
  let headUser = new Set(
    summaryAt >= 0 ? rawIndices.slice(0, summaryAt).filter((i) => i >= 0 && !pinned.has(i)) : [],
  );
  if (format === 'anthropic' && summaryAt === 0)
    headUser = userWordsAfterSummary(format, raw, rawIndices, pinned);
  for (const i of headUser) {
    const facts = wireFacts(format, raw[i]);
    if (facts.role !== 'user' || facts.results.length > 0 || facts.calls.length > 0)
      fail(`raw ${i} is kept before the summary but is neither pinned nor the user's own text`);
  }
  const head = rawIndices.slice(0, Math.max(summaryAt, 0)).filter((i) => i >= 0);
  for (let k = 1; k < head.length; k++)
    if (head[k]! < head[k - 1]!)
      fail(`messages before the summary out of their original order (${head.join(',')})`);
  // Kept (non-pinned) messages after the summary keep their relative order.
  const outKept = rawIndices.filter((i) => i >= 0 && !pinned.has(i) && !headUser.has(i));
  for (let k = 1; k < outKept.length; k++)
    if (outKept[k]! < outKept[k - 1]!)
      fail(
        `kept messages out of their original order (raw order ${rawIndices.join(',')}, pinned ${[...pinned].join(',')})`,
      );
  // The summary sits right after the pinned messages (Anthropic: before them when they would
  // open the request with an assistant turn, so the request starts with a user turn).
  if (summaryAt >= 0) {
    // Pinned messages inside the verbatim suffix keep their place after the summary.
    const firstKept = outKept.length > 0 ? Math.min(...outKept) : Number.POSITIVE_INFINITY;
    const headPinned = outPinned.filter((i) => i < firstKept);
    const summaryFirst =
      format === 'anthropic' &&
      summaryAt === 0 &&
      headPinned.length > 0 &&
      rawFacts0(headPinned[0]!) !== 'user';
    const tailFrom = summaryFirst ? headPinned.length + headUser.size + 1 : summaryAt + 1;
    rawIndices.forEach((i, k) => {
      if (k < summaryAt && !pinned.has(i) && !headUser.has(i))
        fail(`output[${k}] (raw ${i}) is before the summary but not pinned`);
      if (summaryFirst && k > 0 && k < tailFrom && !headPinned.includes(i) && !headUser.has(i))
        fail(`output[${k}] (raw ${i}) sits among the pinned messages but is not pinned`);
      if (k >= tailFrom && pinned.has(i) && i < firstKept)
        fail(
          `output[${k}] (raw ${i}) is pinned, older than the verbatim suffix, but after the summary (raw order ${rawIndices.join(',')}, pinned ${[...pinned].join(',')})`,
        );
      if (k > tailFrom && i < rawIndices[k - 1]!)
        fail(
          `output[${k}] (raw ${i}) is out of history order after the summary (raw order ${rawIndices.join(',')})`,
        );
    });
  }
  // An Anthropic request starts with a user turn, unless the caller's own history started
  // with that assistant message (nothing the library can fix).
  if (
    format === 'anthropic' &&
    output.length > 0 &&
    wireFacts(format, output[0]).role !== 'user' &&
    rawIndices[0] !== 0
  )
    fail('an Anthropic request must start with a user turn');

  // The newest message is always sent, and the verbatim part is a contiguous suffix of the
  // history: every unpinned message after the first kept one is kept.
  if (raw.length > 0 && !rawIndices.includes(raw.length - 1) && !pinned.has(raw.length - 1))
    fail(`the last message (raw ${raw.length - 1}) is missing`);
  if (outKept.length > 0) {
    const keptSet = new Set(outKept);
    for (let i = outKept[0]!; i < raw.length; i++)
      if (!pinned.has(i) && !keptSet.has(i))
        fail(`raw ${i} is missing from the verbatim suffix (not contiguous)`);
  }

  // Tool pairs, by position (ids may repeat: `call_0` every turn): a result answers the first
  // unanswered call with its id in its round. Every kept result has its call earlier in the
  // output; every kept call has all of its results; nothing from outside sits in between.
  const rawFacts = raw.map((m) => wireFacts(format, m));
  const callOfResult = new Map<string, number>(); // `${raw}:${position}` -> raw index of the call
  const resultsOfCall = new Map<number, number[]>(); // raw index of the call -> raw indices of results
  {
    let open = new Map<string, number[]>();
    let inModel = false;
    rawFacts.forEach((f, i) => {
      const modelSide = f.reasoning || (f.role === 'assistant' && f.results.length === 0);
      if (modelSide) {
        if (!inModel) open = new Map();
        inModel = true;
        for (const id of f.calls) open.set(id, [...(open.get(id) ?? []), i]);
        return;
      }
      inModel = false;
      if (f.results.length > 0) {
        f.results.forEach((id, position) => {
          const list = open.get(id);
          const call = list?.shift();
          if (call === undefined) return;
          callOfResult.set(`${i}:${position}`, call);
          resultsOfCall.set(call, [...(resultsOfCall.get(call) ?? []), i]);
        });
      } else if (f.role === 'user') open = new Map();
    });
  }
  const outAt = new Map<number, number>();
  rawIndices.forEach((i, k) => {
    if (i >= 0) outAt.set(i, k);
  });
  rawIndices.forEach((i, k) => {
    if (i < 0) return;
    rawFacts[i]!.results.forEach((id, position) => {
      const call = callOfResult.get(`${i}:${position}`);
      if (call === undefined) fail(`output[${k}] holds a result of ${id} that answers no call in the input`);
      const callAt = outAt.get(call!);
      if (callAt === undefined || callAt > k)
        fail(`output[${k}] holds the result of ${id} without its call (raw ${call}) before it`);
    });
  });
  for (const [call, holders] of resultsOfCall) {
    const k = outAt.get(call);
    if (k === undefined) continue;
    for (const h of holders)
      if (!outAt.has(h)) fail(`output[${k}] holds call raw ${call} but its result (raw ${h}) is missing`);
    const lastRaw = Math.max(...holders);
    const lastOut = outAt.get(lastRaw)!;
    for (let j = k + 1; j < lastOut; j++) {
      const r = rawIndices[j]!;
      if (r < call || r > lastRaw)
        fail(`output[${j}] (raw ${r}) is interleaved in the tool block of raw ${call}`);
    }
  }

  // Responses reasoning items stay right before the item they belong to.
  if (format === 'openai-responses') {
    rawFacts.forEach((f, r) => {
      if (!f.reasoning || r + 1 >= raw.length) return;
      const a = rawIndices.indexOf(r);
      const b = rawIndices.indexOf(r + 1);
      if (a < 0 !== b < 0)
        fail(`reasoning item raw ${r} and the item after it (raw ${r + 1}) were split (${a}, ${b})`);
      if (a >= 0 && b !== a + 1) fail(`reasoning item raw ${r} is not right before its item in the output`);
    });
  }
  return { summaries, rawIndices, ...(summaryText !== undefined ? { summaryText } : {}) };
}

/**
 * Anthropic with the summary first (the pinned head opens with an assistant turn): the user's
 * kept words sit after the pinned head, before the verbatim suffix. Repeated texts make the
 * mapping of output to history ambiguous, so the longest run of user text that leaves a
 * contiguous suffix is taken as the kept words.
 */
function userWordsAfterSummary(
  format: WireFormat,
  raw: readonly unknown[],
  rawIndices: readonly number[],
  pinned: ReadonlySet<number>,
): Set<number> {
  const isUserText = (i: number) => {
    const facts = wireFacts(format, raw[i]);
    return facts.role === 'user' && facts.results.length === 0 && facts.calls.length === 0;
  };
  // The summary goes first only ahead of a pinned head that opens with an assistant turn: with
  // anything else after it (the user's words, an unpinned message), there is no head at all and
  // the summary is followed by the verbatim suffix (which may hold the user's pinned newest turn).
  const opener = rawIndices[1];
  if (
    opener === undefined ||
    opener < 0 ||
    !pinned.has(opener) ||
    wireFacts(format, raw[opener]).role === 'user'
  )
    return new Set();
  const candidates: number[] = [];
  for (let k = 1; k < rawIndices.length; k++) {
    const i = rawIndices[k]!;
    if (i < 0 || (k > 1 && i < rawIndices[k - 1]!)) break;
    if (pinned.has(i)) continue;
    if (!isUserText(i)) break;
    candidates.push(i);
  }
  for (let n = candidates.length; n > 0; n--) {
    const head = new Set(candidates.slice(0, n));
    const rest = rawIndices.filter((i) => i >= 0 && !pinned.has(i) && !head.has(i));
    const first = rest.length > 0 ? Math.min(...rest) : raw.length;
    let contiguous = true;
    for (let i = first; i < raw.length; i++) if (!pinned.has(i) && !rest.includes(i)) contiguous = false;
    if (contiguous) return head;
  }
  return new Set();
}
