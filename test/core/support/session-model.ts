/**
 * Random agent sessions for the property tests, described abstractly (steps). They are
 * rendered into the three wire formats by render-session.ts; wire-facts.ts reads the formats
 * independently of the library's codecs and check-output.ts checks the manager's output.
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
