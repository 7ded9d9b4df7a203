/**
 * Deterministic synthetic agent sessions for tests, the demo and the benchmark: a coding
 * assistant with a system prompt, a protected policy, user requests, tool calls with
 * results of varied size, and decisions, in the OpenAI Chat format.
 */

/** A seeded PRNG (mulberry32), so sessions are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Options of {@link syntheticSession}. */
export interface SyntheticSessionOptions {
  /** @default 1 */
  seed?: number;
  /** Number of user turns. @default 20 */
  turns?: number;
  /** Tool calls per turn, on average. @default 3 */
  toolDensity?: number;
  /** Average characters of a tool result. @default 1200 */
  resultChars?: number;
  /** Fraction of tool calls issued in parallel pairs. @default 0.2 */
  parallelRate?: number;
  /** Include a system prompt and a protected developer policy. @default true */
  pinned?: boolean;
}

const FILES = [
  'src/auth/session.ts',
  'src/auth/token.ts',
  'src/api/routes.ts',
  'src/db/migrations/004_users.sql',
  'test/auth.test.ts',
  'README.md',
  'src/config/env.ts',
];
const FUNCS = [
  'refreshToken',
  'validateSession',
  'hashPassword',
  'createUser',
  'rotateKeys',
  'parseConfig',
  'handleLogin',
];
const WORDS =
  'the session token is validated against the store before each request and rotated every fifteen minutes while the cache keeps hot keys for the gateway and the worker pool drains slowly under load'.split(
    ' ',
  );

function pick<T>(rand: () => number, list: readonly T[]): T {
  return list[Math.floor(rand() * list.length)]!;
}

function prose(rand: () => number, chars: number): string {
  let out = '';
  while (out.length < chars) out += `${pick(rand, WORDS)}${rand() < 0.08 ? '.\n' : ' '}`;
  return out;
}

function code(rand: () => number, chars: number): string {
  let out = '';
  let line = 1;
  while (out.length < chars) {
    const fn = pick(rand, FUNCS);
    out += `${line}\texport async function ${fn}(input: string, retries = ${Math.floor(rand() * 5)}): Promise<void> {\n${line + 1}\t  const value = await store.get(\`${fn}:\${input}\`); // ${prose(rand, 40).trim()}\n${line + 2}\t  if (!value) throw new Error('missing ${fn}');\n${line + 3}\t}\n`;
    line += 4;
  }
  return out;
}

/**
 * Builds a session of about `turns` user turns.
 *
 * @example
 * ```ts
 * const messages = syntheticSession({ turns: 200, seed: 7 });
 * ```
 */
export function syntheticSession(options: SyntheticSessionOptions = {}): Record<string, unknown>[] {
  const rand = seededRandom(options.seed ?? 1);
  const turns = options.turns ?? 20;
  const density = options.toolDensity ?? 3;
  const resultChars = options.resultChars ?? 1200;
  const parallelRate = options.parallelRate ?? 0.2;
  const messages: Record<string, unknown>[] = [];
  if (options.pinned ?? true) {
    messages.push({
      role: 'system',
      content:
        'You are a careful coding assistant working in the repository acme/auth-service on branch feature/token-rotation.',
    });
    messages.push({
      role: 'developer',
      content:
        'Security policy: never print secrets; all tokens must expire within 15 minutes; migrations must be reversible.',
      meta: { protected: true, label: 'Security Policy' },
    });
  }
  let callNo = 0;
  for (let turn = 0; turn < turns; turn++) {
    const file = pick(rand, FILES);
    messages.push({
      role: 'user',
      content:
        turn === 0
          ? `Goal: implement token rotation in ${file} so that sessions survive key rotation. Success criteria: all tests in test/auth.test.ts pass and p95 latency stays under 120 ms. Ticket AUTH-${100 + turn}.`
          : `Next, please ${pick(rand, ['fix', 'refactor', 'investigate', 'add tests for'])} ${pick(rand, FUNCS)} in ${file} (ticket AUTH-${100 + turn}). ${prose(rand, 80 + Math.floor(rand() * 200))}`,
    });
    const calls = Math.max(0, Math.round(density * (0.5 + rand())));
    for (let c = 0; c < calls; ) {
      const parallel = rand() < parallelRate && c + 1 < calls ? 2 : 1;
      const toolCalls = [];
      for (let p = 0; p < parallel; p++) {
        const id = `call_${turn}_${callNo++}`;
        const name = pick(rand, ['read_file', 'run_tests', 'edit_file', 'grep']);
        toolCalls.push({
          id,
          type: 'function',
          function: {
            name,
            arguments: JSON.stringify({ path: pick(rand, FILES), pattern: pick(rand, FUNCS) }),
          },
        });
      }
      messages.push({
        role: 'assistant',
        content: rand() < 0.5 ? null : `I'll check ${file} because ${prose(rand, 60).trim()}.`,
        tool_calls: toolCalls,
      });
      for (const call of toolCalls) {
        const size = Math.floor(resultChars * (0.3 + rand() * 1.4));
        const body =
          call.function.name === 'run_tests'
            ? `FAIL test/auth.test.ts > ${pick(rand, FUNCS)}\n${prose(rand, size)}`
            : code(rand, size);
        messages.push({ role: 'tool', tool_call_id: call.id, content: body });
      }
      c += parallel;
    }
    messages.push({
      role: 'assistant',
      content: `Decided to use ${pick(rand, ['HMAC-SHA256', 'a sliding window', 'Redis', 'a background job'])} for ${pick(rand, FUNCS)} because ${prose(rand, 120).trim()}. TODO: ${prose(rand, 50).trim()}.`,
    });
  }
  return messages;
}
