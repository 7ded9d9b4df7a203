/**
 * The structural invariants of one output against the raw history: nothing but summaries and
 * unchanged (or marked-rewritten) input messages, pinned messages all present and in order,
 * the summary right after them, a contiguous verbatim suffix, tool calls never split from
 * their results, reasoning items beside their item.
 */
import type { WireFormat } from './session-model.js';
import { pinnedIndices, SUMMARY_PREFIX, type WireFacts, wireFacts, withoutMeta } from './wire-facts.js';

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

type Fail = (what: string) => never;

/** The output mapped onto the history. */
interface Matched {
  summaries: number;
  summaryAt: number;
  summaryText?: string | undefined;
  rawIndices: number[];
}

/** Where the kept messages sit: pinned, the user's words before the summary, the rest. */
interface Placed {
  pinned: Set<number>;
  outPinned: number[];
  headUser: Set<number>;
  outKept: number[];
}

/**
 * Checks the structural invariants of one output against the raw history. Throws an
 * Error naming the broken invariant.
 */
export function checkOutput(check: OutputCheck): OutputShape {
  const { format, raw, output } = check;
  const chars = Number(process.env.FC_CAUSE_CHARS ?? 3000);
  const fail: Fail = (what) => {
    throw new Error(
      `${what}\noutput: ${JSON.stringify(output).slice(0, chars)}\nraw: ${JSON.stringify(raw).slice(0, chars)}`,
    );
  };
  const matched = matchOutput(format, raw, output, fail);
  const { summaries, rawIndices, summaryText } = matched;
  if (summaries > 1) fail(`${summaries} summary messages in the output`);
  if (new Set(rawIndices.filter((i) => i >= 0)).size !== rawIndices.filter((i) => i >= 0).length)
    fail('a message appears twice in the output');
  const placed = checkOrder(check, matched, fail);
  if (matched.summaryAt >= 0) checkSummaryPlace(check, matched, placed, fail);
  // An Anthropic request starts with a user turn, unless the caller's own history started
  // with that assistant message (nothing the library can fix).
  if (
    format === 'anthropic' &&
    output.length > 0 &&
    wireFacts(format, output[0]).role !== 'user' &&
    rawIndices[0] !== 0
  )
    fail('an Anthropic request must start with a user turn');
  checkSuffix(raw, rawIndices, placed, fail);
  const rawFacts = raw.map((m) => wireFacts(format, m));
  checkToolPairs(rawFacts, rawIndices, fail);
  // Responses reasoning items stay right before the item they belong to.
  if (format === 'openai-responses') checkReasoning(rawFacts, rawIndices, fail);
  return { summaries, rawIndices, ...(summaryText !== undefined ? { summaryText } : {}) };
}

/** Maps each output message to its raw position (-1 for the summary), or fails. */
function matchOutput(
  format: WireFormat,
  raw: readonly unknown[],
  output: readonly unknown[],
  fail: Fail,
): Matched {
  // Equal messages (real transcripts repeat some) are matched to their raw positions in order.
  const keyOf = new Map<string, number[]>();
  raw.forEach((m, i) => {
    const key = JSON.stringify(withoutMeta(m));
    keyOf.set(key, [...(keyOf.get(key) ?? []), i]);
  });
  const matched: Matched = { summaries: 0, summaryAt: -1, rawIndices: new Array(output.length) };
  // Matched from the end: of equal messages, the ones kept are the latest.
  const taken = new Set<number>();
  for (let k = output.length - 1; k >= 0; k--) {
    const m = output[k];
    if (m !== null && typeof m === 'object' && Object.hasOwn(m, 'meta'))
      fail(`meta leaked into output[${k}]`);
    const facts = wireFacts(format, m);
    if (facts.text.startsWith(SUMMARY_PREFIX)) {
      matched.summaries++;
      matched.summaryAt = k;
      matched.summaryText = facts.text;
      matched.rawIndices[k] = -1;
      continue;
    }
    const candidates = keyOf.get(JSON.stringify(m));
    let index: number | undefined;
    while (candidates && candidates.length > 0 && index === undefined) {
      const i = candidates.pop()!;
      if (!taken.has(i)) index = i;
    }
    index ??= rewrittenAt(format, raw, m, taken);
    if (index === undefined) {
      fail(
        `output[${k}] is neither a summary nor an input message unchanged (minus meta): ${JSON.stringify(m).slice(0, 300)}`,
      );
    }
    taken.add(index!);
    matched.rawIndices[k] = index!;
  }
  return matched;
}

/**
 * A message the cascade rewrote (a cleared tool result, shortened arguments, a cut) keeps its
 * structure (role, call ids, result ids) and carries the library's marker: the latest raw
 * message of that structure not matched yet.
 */
function rewrittenAt(
  format: WireFormat,
  raw: readonly unknown[],
  message: unknown,
  taken: ReadonlySet<number>,
): number | undefined {
  const text = JSON.stringify(message);
  if (!text.includes('[agent-compaction: ') && !text.includes('[cleared: ')) return undefined;
  const shape = (x: unknown) => {
    const f = wireFacts(format, x);
    return JSON.stringify([f.role, f.calls, f.results]);
  };
  const wanted = shape(message);
  for (let i = raw.length - 1; i >= 0; i--) if (!taken.has(i) && shape(raw[i]) === wanted) return i;
  return undefined;
}

/** Pinned messages all present and in order; the user's words before the summary; kept order. */
function checkOrder(check: OutputCheck, matched: Matched, fail: Fail): Placed {
  const { format, raw } = check;
  const { rawIndices, summaryAt } = matched;
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
  return { pinned, outPinned, headUser, outKept };
}

/**
 * The summary sits right after the pinned messages (Anthropic: before them when they would
 * open the request with an assistant turn, so the request starts with a user turn).
 */
function checkSummaryPlace(check: OutputCheck, matched: Matched, placed: Placed, fail: Fail): void {
  const { format, raw } = check;
  const { rawIndices, summaryAt } = matched;
  const { pinned, outPinned, headUser, outKept } = placed;
  // Pinned messages inside the verbatim suffix keep their place after the summary.
  const firstKept = outKept.length > 0 ? Math.min(...outKept) : Number.POSITIVE_INFINITY;
  const headPinned = outPinned.filter((i) => i < firstKept);
  const summaryFirst =
    format === 'anthropic' &&
    summaryAt === 0 &&
    headPinned.length > 0 &&
    wireFacts(format, raw[headPinned[0]!]).role !== 'user';
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

/**
 * The newest message is always sent, and the verbatim part is a contiguous suffix of the
 * history: every unpinned message after the first kept one is kept.
 */
function checkSuffix(
  raw: readonly unknown[],
  rawIndices: readonly number[],
  placed: Placed,
  fail: Fail,
): void {
  const { pinned, outKept } = placed;
  if (raw.length > 0 && !rawIndices.includes(raw.length - 1) && !pinned.has(raw.length - 1))
    fail(`the last message (raw ${raw.length - 1}) is missing`);
  if (outKept.length === 0) return;
  const keptSet = new Set(outKept);
  for (let i = outKept[0]!; i < raw.length; i++)
    if (!pinned.has(i) && !keptSet.has(i))
      fail(`raw ${i} is missing from the verbatim suffix (not contiguous)`);
}

/**
 * Tool pairs, by position (ids may repeat: `call_0` every turn): a result answers the first
 * unanswered call with its id in its round.
 */
function pairCalls(rawFacts: readonly WireFacts[]) {
  const callOfResult = new Map<string, number>(); // `${raw}:${position}` -> raw index of the call
  const resultsOfCall = new Map<number, number[]>(); // raw index of the call -> raw indices of results
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
        const call = open.get(id)?.shift();
        if (call === undefined) return;
        callOfResult.set(`${i}:${position}`, call);
        resultsOfCall.set(call, [...(resultsOfCall.get(call) ?? []), i]);
      });
    } else if (f.role === 'user') open = new Map();
  });
  return { callOfResult, resultsOfCall };
}

/** Every kept result has its call earlier in the output; every kept call has all of its results; nothing from outside sits in between. */
function checkToolPairs(rawFacts: readonly WireFacts[], rawIndices: readonly number[], fail: Fail): void {
  const { callOfResult, resultsOfCall } = pairCalls(rawFacts);
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
}

/** Responses reasoning items stay right before the item they belong to. */
function checkReasoning(rawFacts: readonly WireFacts[], rawIndices: readonly number[], fail: Fail): void {
  rawFacts.forEach((f, r) => {
    if (!f.reasoning || r + 1 >= rawFacts.length) return;
    const a = rawIndices.indexOf(r);
    const b = rawIndices.indexOf(r + 1);
    if (a < 0 !== b < 0)
      fail(`reasoning item raw ${r} and the item after it (raw ${r + 1}) were split (${a}, ${b})`);
    if (a >= 0 && b !== a + 1) fail(`reasoning item raw ${r} is not right before its item in the output`);
  });
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
