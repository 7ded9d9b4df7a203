/**
 * Rewrites of one wire message for the reduction cascade: a tool result's content
 * replaced by a placeholder, long tool-call arguments shortened head…tail, an oversized
 * message cut head…tail. Each returns a new object (the caller's is never touched) in the
 * message's own format, or `undefined` when the message has nothing to rewrite.
 */
import type { MessageFormat } from '../../messages/message.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Replaces the content of every tool result of `raw` (positions in `positions`) with `text(position)`. */
export function replaceToolResults(
  raw: unknown,
  format: MessageFormat,
  positions: readonly number[],
  text: (position: number) => string,
): unknown | undefined {
  if (!isObject(raw) || positions.length === 0) return undefined;
  if (format === 'openai-chat') return { ...raw, content: text(positions[0]!) };
  if (format === 'openai-responses') {
    const output = raw.output;
    const replacement = text(positions[0]!);
    if (typeof output === 'string' || output === undefined) return { ...raw, output: replacement };
    if (isObject(output) && typeof output.text === 'string')
      return { ...raw, output: { ...output, text: replacement } };
    if (Array.isArray(output)) return { ...raw, output: replacement };
    return undefined;
  }
  if (!Array.isArray(raw.content)) return undefined;
  let position = -1;
  const wanted = new Set(positions);
  const content = raw.content.map((block) => {
    if (!isObject(block) || block.type !== 'tool_result') return block;
    position++;
    return wanted.has(position) ? { ...block, content: text(position) } : block;
  });
  return { ...raw, content };
}

/** Shortens every string longer than `maxChars` inside a JSON value (head…tail with a marker). */
export function shortenStrings(
  value: unknown,
  maxChars: number,
  marker: (removed: number) => string,
): unknown {
  if (typeof value === 'string') return shortenText(value, maxChars, marker);
  if (Array.isArray(value)) return value.map((v) => shortenStrings(v, maxChars, marker));
  if (isObject(value)) {
    const out: Json = {};
    for (const [key, v] of Object.entries(value)) out[key] = shortenStrings(v, maxChars, marker);
    return out;
  }
  return value;
}

/** Keeps the head and tail of `text` (about `maxChars` in all), cut at whitespace where possible. */
export function shortenText(text: string, maxChars: number, marker: (removed: number) => string): string {
  if (text.length <= maxChars) return text;
  const half = Math.max(1, Math.floor(maxChars / 2));
  let headEnd = half;
  let tailStart = text.length - half;
  // Prefer cutting at whitespace within a short distance, so a token-like string is not split.
  const space = text.lastIndexOf(' ', headEnd);
  if (space > half * 0.6) headEnd = space;
  const nl = text.indexOf('\n', tailStart);
  if (nl >= 0 && nl < tailStart + half * 0.4) tailStart = nl + 1;
  const removed = tailStart - headEnd;
  return `${text.slice(0, headEnd)}\n${marker(removed)}\n${text.slice(tailStart)}`;
}

/** Shortens the arguments of the calls at `positions` in `raw`. */
export function shortenToolArguments(
  raw: unknown,
  format: MessageFormat,
  positions: readonly number[],
  maxChars: number,
  marker: (removed: number) => string,
): unknown | undefined {
  if (!isObject(raw) || positions.length === 0) return undefined;
  const wanted = new Set(positions);
  const shortenArgs = (args: unknown): unknown => {
    if (typeof args !== 'string') return shortenStrings(args, maxChars, marker);
    try {
      return JSON.stringify(shortenStrings(JSON.parse(args), maxChars, marker));
    } catch {
      return shortenText(args, maxChars, marker);
    }
  };
  if (format === 'openai-chat') {
    if (!Array.isArray(raw.tool_calls)) return undefined;
    const toolCalls = raw.tool_calls.map((call, i) => {
      if (!wanted.has(i) || !isObject(call) || !isObject(call.function)) return call;
      return { ...call, function: { ...call.function, arguments: shortenArgs(call.function.arguments) } };
    });
    return { ...raw, tool_calls: toolCalls };
  }
  if (format === 'openai-responses') {
    for (const key of ['arguments', 'input']) {
      if (key in raw) return { ...raw, [key]: shortenArgs(raw[key]) };
    }
    return undefined;
  }
  if (!Array.isArray(raw.content)) return undefined;
  let position = -1;
  const content = raw.content.map((block) => {
    if (!isObject(block) || block.type !== 'tool_use') return block;
    position++;
    return wanted.has(position) ? { ...block, input: shortenStrings(block.input, maxChars, marker) } : block;
  });
  return { ...raw, content };
}

/** Keys whose strings are never cut: identifiers, binary data, signatures, thinking. */
const UNCUT_KEYS = new Set([
  'id',
  'type',
  'role',
  'name',
  'call_id',
  'callId',
  'tool_call_id',
  'tool_use_id',
  'data',
  'url',
  'image_url',
  'signature',
  'thinking',
  'encrypted_content',
  'status',
  'media_type',
]);

interface Leaf {
  parent: Json | unknown[];
  key: string | number;
  length: number;
}

const NO_KEYS: ReadonlySet<string> = new Set();

/**
 * The strings of a JSON value, but those under the keys `uncut` names. A tool call's own
 * input (Anthropic `tool_use.input`, call arguments as JSON) holds the tool's arguments, not
 * wire fields: any of its keys (`data`, `url`, `name` ...) may hold the text to cut.
 */
function collectLeaves(value: unknown, out: Leaf[], uncut: ReadonlySet<string> = UNCUT_KEYS): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      if (typeof v === 'string') out.push({ parent: value, key: i, length: v.length });
      else collectLeaves(v, out, uncut);
    });
  } else if (isObject(value)) {
    const call = typeof value.type === 'string' && value.type.endsWith('tool_use');
    // A plain-text document's source (Anthropic `{type: 'text', data}`) holds text, not bytes.
    const textData = value.type === 'text';
    for (const [key, v] of Object.entries(value)) {
      if (uncut.has(key) && !(textData && key === 'data')) continue;
      if (typeof v === 'string') {
        if (!v.startsWith('data:')) out.push({ parent: value, key, length: v.length });
      } else collectLeaves(v, out, call && key === 'input' ? NO_KEYS : uncut);
    }
  }
}

/** A deep copy of a JSON value (the cut works on it; the caller's object stays whole). */
function copyJson<T>(value: T): T {
  return structuredClone(value);
}

/** A string of a message cut to fewer than this many characters is not cut at all. */
const MIN_CUT_KEEP = 64;
/** About the characters a cut marker adds (`\n[agent-compaction: 8,212 chars cut here ...]\n`). */
const MARKER_CHARS = 64;

/**
 * Cuts the longest text of a message (content, output or arguments, whatever it is) to
 * `keepChars`, head and tail kept around `marker`. When no one string is that long but their
 * sum is (parallel tool calls, several blocks), the longest ones are cut in turn until the
 * strings hold about `keepChars` in all. Returns the new message and the number of characters
 * removed, or `undefined` when nothing can be cut.
 */
export function cutLongestText(
  raw: unknown,
  keepChars: number,
  marker: (removed: number) => string,
): { wire: unknown; removed: number } | undefined {
  if (!isObject(raw)) return undefined;
  const copy = copyJson(raw);
  delete copy.meta;
  // structuredClone drops symbol keys: an integration's tag on its converted message (the AI
  // SDK's origin) must survive, or the cut message comes back as a message of its own.
  for (const key of Object.getOwnPropertySymbols(raw)) {
    const descriptor = Object.getOwnPropertyDescriptor(raw, key);
    if (descriptor) Object.defineProperty(copy, key, descriptor);
  }
  const leaves: Leaf[] = [];
  collectLeaves(copy, leaves);
  let longest: Leaf | undefined;
  for (const leaf of leaves) if (!longest || leaf.length > longest.length) longest = leaf;
  if (!longest) return undefined;
  // One string holds the message: it alone is cut to keepChars. When others hold more, the
  // longest are cut in turn below, so the strings hold about keepChars in all.
  const others = leaves.reduce((sum, leaf) => sum + leaf.length, 0) - longest.length;
  if (longest.length > keepChars && others < MIN_CUT_KEEP) {
    const text = (longest.parent as Record<string | number, string>)[longest.key]!;
    const cut = cutText(longest, text, keepChars, marker);
    (longest.parent as Record<string | number, string>)[longest.key] = cut;
    return { wire: copy, removed: text.length - cut.length };
  }
  const removed = cutInTurn(leaves, keepChars, marker);
  return removed > 0 ? { wire: copy, removed } : undefined;
}

/** Cuts the longest of `leaves` in turn until they hold about `keepChars` in all; the characters removed. */
function cutInTurn(leaves: Leaf[], keepChars: number, marker: (removed: number) => string): number {
  // Longest first (a stable sort: the same message is cut the same way on every call).
  leaves.sort((a, b) => b.length - a.length);
  let excess = leaves.reduce((sum, leaf) => sum + leaf.length, 0) - keepChars;
  let removed = 0;
  for (const leaf of leaves) {
    if (excess <= 0 || leaf.length <= MIN_CUT_KEEP) break;
    // The marker takes some of what the cut frees: cut that much deeper, so that a last small
    // excess is not met by a cut that frees almost nothing.
    const cut = cutLeaf(leaf, Math.max(MIN_CUT_KEEP, leaf.length - excess - MARKER_CHARS), marker);
    removed += cut;
    excess -= cut;
  }
  return removed;
}

/** Cuts one string of a message to about `keepChars`; the characters removed (0: left as it was). */
function cutLeaf(leaf: Leaf, keepChars: number, marker: (removed: number) => string): number {
  const parent = leaf.parent as Record<string | number, string>;
  const text = parent[leaf.key]!;
  const cut = cutText(leaf, text, keepChars, marker);
  if (cut.length >= text.length) return 0;
  parent[leaf.key] = cut;
  return text.length - cut.length;
}

function cutText(leaf: Leaf, text: string, keepChars: number, marker: (removed: number) => string): string {
  // Call arguments are JSON text: cut inside their longest string, so they stay JSON.
  return (
    (leaf.key === 'arguments' ? cutInsideJson(text, keepChars, marker) : undefined) ??
    shortenText(text, keepChars, marker)
  );
}

/**
 * Cuts the strings inside JSON `text` so the whole keeps about `keepChars` (its longest string
 * alone when the others hold almost nothing, else the longest in turn); `undefined` when not JSON.
 */
function cutInsideJson(
  text: string,
  keepChars: number,
  marker: (removed: number) => string,
): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(parsed) && !Array.isArray(parsed)) return undefined;
  const leaves: Leaf[] = [];
  collectLeaves(parsed, leaves, NO_KEYS);
  let longest: Leaf | undefined;
  for (const leaf of leaves) if (!longest || leaf.length > longest.length) longest = leaf;
  if (!longest) return undefined;
  const strings = leaves.reduce((sum, leaf) => sum + leaf.length, 0);
  if (strings - longest.length >= MIN_CUT_KEEP) {
    // Several strings hold the text (a write of two files' contents): the longest in turn.
    cutInTurn(leaves, Math.max(1, keepChars - Math.max(0, text.length - strings)), marker);
    return JSON.stringify(parsed);
  }
  const parent = longest.parent as Record<string | number, string>;
  const value = parent[longest.key]!;
  const rest = text.length - JSON.stringify(value).length;
  parent[longest.key] = shortenText(value, Math.max(1, keepChars - rest), marker);
  return JSON.stringify(parsed);
}
