/**
 * Tool facts: one line per meaningful call, `name(key arguments) → outcome`. Results are
 * paired with calls by position ({@link answeredCallsSteps}), never by id alone: ids repeat. The
 * outcome is the error line, or the key fields of the result (ids, statuses, amounts with
 * what they are for, dates), arrays reduced to their ids, contact details left out. Values
 * are never cut inside: a field too long to show is left out whole.
 */

import { findIdentifiers, identifierKind } from '../../language/key-identifiers.js';
import type { CompactMessage } from '../../messages/message.js';
import { answeredCallsSteps } from '../../messages/tool-pairing.js';
import { releaseRegExpCode } from '../../process-caches.js';
import { runSteps, type Steps } from '../../time-slice.js';
import type { ToolTraits } from './types.js';

/** A tool call with its outcome, ready to become a unit. */
export interface ToolFact {
  /** Index of the message that made the call. */
  message: number;
  name: string;
  /** `name(key arguments) → outcome`. */
  text: string;
  /** Identifier values passed as arguments. */
  argumentIds: string[];
  /**
   * Distinct identifiers the whole result names beyond the call's own (counted up to
   * {@link MAX_REVEALED_IDS} + 1, before the outcome is shortened): more is a listing.
   */
  revealedIds: number;
  traits: ToolTraits;
}

/** A result naming more new ids than this is a listing (a search hit list, a catalog). */
export const MAX_REVEALED_IDS = 12;

/** The distinct ids `output` names that `signature` does not, counted up to `MAX_REVEALED_IDS + 1`. */
function countRevealed(output: string | undefined, signature: string): number {
  if (output === undefined) return 0;
  let n = 0;
  const seen = new Set<string>();
  for (const found of findIdentifiers(output, MAX_REVEALED_IDS + 1 + 16)) {
    const id = found.text;
    if (seen.has(id) || signature.includes(id)) continue;
    seen.add(id);
    if (++n > MAX_REVEALED_IDS) break;
  }
  return n;
}

const MAX_VALUE_CHARS = 60;
const MAX_ARGS_CHARS = 140;
const MAX_OUTCOME_CHARS = 220;
/** Outputs and arguments longer than this are not parsed as JSON. */
const MAX_JSON_CHARS = 200_000;
const CONTACT_KEY =
  /^(?:e-?mail|phone|mobile|fax|address|address\d|street|city|zip|zip_?code|postal_?code|postcode|country|province|state_?code|cvv|cvc|password|passwd|secret|api_?key|token|access_?token|card_?number|ssn|dob|birth_?date)$/i;
const ID_KEY = /(?:^|_|-)(?:id|ids|number|code|sku|ref|key)$|[a-z](?:Id|Ids|Number|Code)$|^(?:id|ids|sku)$/;
const STATUS_KEY = /(?:^|_)(?:status|state|result|outcome|ok|success)$/i;
const AMOUNT_KEY = /amount|total|price|balance|cost|refund|fee|subtotal|charge|paid/i;
const DATE_KEY = /(?:^|_)(?:date|time|at|deadline|due|created|updated|timestamp)$|Date$|At$/;
const NAME_KEY =
  /^(?:name|title|path|file|filename|url|branch|query|pattern|command|cmd|method|type|kind|tool|description|reason|item|product)$/i;
/** A path under another name: `file_path` (Claude Code's, Qwen Code's), `filePath`, `absolute_path`. */
const PATH_KEY = /(?:_(?:path|file)|[a-z](?:Path|File))$/;
const KEY_PATTERNS = [ID_KEY, STATUS_KEY, AMOUNT_KEY, DATE_KEY, NAME_KEY, PATH_KEY];
const STATE_VERBS = new Set(
  `create update delete remove cancel modify change exchange return refund book reserve send transfer pay charge set add
write edit apply submit place post put patch insert commit push merge deploy move rename replace save upload publish
approve reject assign close reopen revert reset restart kill install uninstall`.split(/\s+/),
);
const SCRATCH =
  /^(?:think|thought|thinking|scratchpad|scratch|reason|reasoning|plan|planning|reflect|note|notes|todo_?write)$/i;
const FAILURE =
  /\b(?:error|errors|exception|traceback|fail|failed|failure|fails|failing|denied|not found|refused|timed out|invalid|declined|unauthorized|forbidden|panic|cannot|can't|unable)\b/i;
/**
 * The placeholder the pipeline leaves for a cleared tool result: `[cleared: grep output, 518
 * chars; recall "tool-abc"]` (and the longer form of earlier versions, still in persisted views).
 */
const CLEARED =
  /^\[(?:cleared: [^,\]\n]{1,100} output|agent-compaction: output of tool "[^"\n]{0,100}" cleared)[^\]\n]{0,200}?(?:recall(?: ref)? "([\w-]{1,64})")?\]$/;
const CODE_LINE = /^\s*(?:\d+[:|]|[✓√])|\b(?:throw|raise|new Error|catch|except)\b/;

/** Words of a tool name: `exchange_delivered_order_items` → exchange, delivered, ... */
function nameWords(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** True for a call that changes state, judged by the first verb of its name. */
export function isStateChanging(name: string): boolean {
  const words = nameWords(name);
  return words.some((w, i) => i < 2 && STATE_VERBS.has(w));
}

function parseJson(text: string): unknown {
  const start = text.trimStart()[0];
  if (text.length > MAX_JSON_CHARS || (start !== '{' && start !== '[')) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A scalar shown whole, or undefined when it is too long to show (never cut). */
function scalar(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value !== 'string') return undefined;
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length > 0 && flat.length <= MAX_VALUE_CHARS ? flat : undefined;
}

/** A command shown by its leading whole words, up to the value limit. */
function commandValue(value: string): string {
  const words: string[] = [];
  let length = 0;
  for (const word of value.trim().split(/\s+/)) {
    if (word.length > 40 || length + word.length + 1 > MAX_VALUE_CHARS) break;
    words.push(word);
    length += word.length + 1;
  }
  return words.length === 0
    ? '…'
    : words.join(' ') + (words.join(' ').length < value.trim().length ? ' …' : '');
}

/** The id field of an element of `key`: `item_id` for `items`, else `id`, else the first id-like key. */
function idEntry(item: object, key: string): unknown {
  const singular = key.replace(/ies$/, 'y').replace(/s$/, '');
  const entries = Object.entries(item);
  const preferred = [`${singular}_id`, `${singular}Id`, 'id'];
  for (const name of preferred) {
    const found = entries.find(([k]) => k === name);
    if (found) return found[1];
  }
  return entries.find(([k]) => ID_KEY.test(k))?.[1];
}

/** True for an object keyed by ids (`{"credit_card_7719342": {...}, ...}`). */
function keyedById(value: object): boolean {
  const keys = Object.keys(value);
  return keys.length > 0 && keys.filter((k) => identifierKind(k) !== undefined).length * 2 >= keys.length;
}

/** Ids of an array of objects (or the array's own scalars when they are ids). */
function arrayIds(list: readonly unknown[], key = ''): string[] {
  const ids: string[] = [];
  for (const item of list) {
    if (item && typeof item === 'object' && !Array.isArray(item)) {
      const value = scalar(idEntry(item, key));
      // What the id is for: the element's short name or title, when it has one.
      const named = (item as { name?: unknown; title?: unknown }).name ?? (item as { title?: unknown }).title;
      const label =
        typeof named === 'string' && named.length <= 30 && !named.includes(',') ? `${named} ` : '';
      if (value) ids.push(`${label}${value}`);
    } else {
      const value = scalar(item);
      if (value) ids.push(value);
    }
  }
  return ids;
}

/** Picks `key=value` fields of an object: ids, statuses, amounts, dates, names; nested one level. */
function keyFields(value: unknown, limit: number, prefix = '', depth = 0): string[] {
  if (Array.isArray(value)) {
    const ids = arrayIds(value);
    return ids.length > 0 ? [`${prefix || 'ids'}=[${ids.slice(0, 12).join(', ')}]`] : [];
  }
  if (!value || typeof value !== 'object') return [];
  const out: string[] = [];
  for (const [key, field] of Object.entries(value)) {
    if (out.join(', ').length >= limit) break;
    if (CONTACT_KEY.test(key)) continue;
    const name = prefix ? `${prefix}.${key}` : key;
    if (Array.isArray(field)) {
      const ids = arrayIds(field, key);
      const listed =
        ID_KEY.test(key) ||
        field.some((f) => f && typeof f === 'object') ||
        ids.some((id) => identifierKind(id) !== undefined);
      if (ids.length > 0 && listed) out.push(`${name}=[${ids.slice(0, 12).join(', ')}]`);
      continue;
    }
    if (field && typeof field === 'object' && keyedById(field)) {
      out.push(`${name}=[${Object.keys(field).slice(0, 12).join(', ')}]`);
      continue;
    }
    if (field && typeof field === 'object') {
      if (depth < 2) out.push(...keyFields(field, limit, name, depth + 1));
      continue;
    }
    const shown =
      /^(?:command|cmd)$/i.test(key) && typeof field === 'string' ? commandValue(field) : scalar(field);
    if (shown === undefined) continue;
    if (KEY_PATTERNS.some((pattern) => pattern.test(key))) out.push(`${name}=${shown}`);
  }
  return out;
}

/** Joins fields while they fit `limit` characters (a field is never cut). */
function joinFitting(fields: readonly string[], limit: number): string {
  let out = '';
  for (const field of fields) {
    const next = out ? `${out}, ${field}` : field;
    if (next.length > limit) continue;
    out = next;
  }
  return out;
}

/** The key arguments of a call, and the id values among them. */
export function keyArguments(argumentsText: string): { text: string; ids: string[] } {
  const parsed = parseJson(argumentsText);
  if (parsed && typeof parsed === 'object') {
    const fields = keyFields(parsed, MAX_ARGS_CHARS);
    const ids = fields.flatMap((f) => {
      const [key, value] = [f.slice(0, f.indexOf('=')), f.slice(f.indexOf('=') + 1)];
      if (!ID_KEY.test(key.split('.').pop()!)) return [];
      return value.startsWith('[') ? value.slice(1, -1).split(', ') : [value];
    });
    const onlyOne =
      fields.length === 1 && !fields[0]!.includes('[')
        ? fields[0]!.slice(fields[0]!.indexOf('=') + 1)
        : undefined;
    return { text: onlyOne ?? joinFitting(fields, MAX_ARGS_CHARS), ids };
  }
  const text = argumentsText.trim() === '' ? '' : commandValue(argumentsText);
  return { text, ids: findIdentifiers(argumentsText, 8).map((f) => f.text) };
}

/** A line shown by whole words up to `limit` characters. */
function wordsUpTo(line: string, limit: number): string {
  const words: string[] = [];
  let length = 0;
  for (const word of line.trim().split(/\s+/)) {
    if (word.length > 48) continue;
    if (length + word.length + 1 > limit) break;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

/** The outcome of a result: its error line, its key fields, or its first line plus its identifiers. */
export function outcome(output: string | undefined, isError = false): { text: string; failed: boolean } {
  if (output === undefined) return { text: 'no result', failed: false };
  // A result the pipeline already cleared: only its recall reference is left to show.
  const cleared = CLEARED.exec(output);
  if (cleared)
    return { text: cleared[1] ? `(cleared; recall ref ${cleared[1]})` : '(cleared)', failed: false };
  const lines = output.split('\n', 2000);
  const failing = lines.find((l) => l.length < 500 && FAILURE.test(l) && !CODE_LINE.test(l));
  if (failing || isError)
    return {
      text: wordsUpTo(failing ?? lines.find((l) => l.trim()) ?? 'error', 160) || 'error',
      failed: true,
    };
  const parsed = parseJson(output);
  if (parsed !== undefined) {
    const fields = joinFitting(keyFields(parsed, MAX_OUTCOME_CHARS), MAX_OUTCOME_CHARS);
    return { text: fields || (Array.isArray(parsed) ? `${parsed.length} items` : 'ok'), failed: false };
  }
  const first = wordsUpTo(lines.find((l) => l.trim()) ?? '', 120);
  const ids = [...new Set(findIdentifiers(output, 24).map((f) => f.text.replace(/:\d+$/, '')))]
    .filter((id) => !first.includes(id))
    .slice(0, 8);
  const withIds =
    ids.length > 0
      ? `${first}${first ? ' ' : ''}[${joinFitting(ids, MAX_OUTCOME_CHARS - first.length)}]`
      : first;
  return { text: withIds || '(empty result)', failed: false };
}

/** A result that only confirms its call: `ok`, `File written`, `saved`, `edited successfully`... */
const ECHO =
  /^\W{0,3}(?:ok(?:ay)?|done|success(?:ful(?:ly)?)?|true|saved|written|wrote|edited|updated|applied|created|modified|replaced|deleted|removed)\b/i;
const ECHO_WORDS =
  /\b(?:written|wrote|saved|edited|updated|applied|modified|replaced|success(?:fully)?|ok)\b/i;
const TARGET_KEYS = ['path', 'file_path', 'filePath', 'file', 'filename', 'target', 'url', 'name'];

/** True when `output` only confirms the call (short, no failure, a confirming word). */
function isEcho(output: string | undefined, failed: boolean): boolean {
  if (failed || output === undefined) return false;
  const text = output.trim();
  if (text === '' || text.length > 160 || text.includes('\n')) return false;
  return ECHO.test(text) || (text.length <= 100 && ECHO_WORDS.test(text) && !/\d{2,}/.test(text));
}

/** The path, file or name a call acts on, when its arguments name one. */
function echoTarget(argumentsText: string): string | undefined {
  const parsed = argumentsText.length <= MAX_JSON_CHARS ? parseJson(argumentsText) : undefined;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  for (const key of TARGET_KEYS) {
    const value = (parsed as Record<string, unknown>)[key];
    if (typeof value === 'string' && value.length > 0 && value.length <= MAX_VALUE_CHARS * 2) return value;
  }
  return undefined;
}

/**
 * One fact per tool call of `messages`, in order (a call whose result only confirms it
 * shares one line per tool and target: the latest, with the number of calls). A call repeated with the same key
 * arguments (a file reread, tests rerun) is marked superseded but for its latest one.
 */
export function toolFacts(messages: readonly CompactMessage[]): ToolFact[] {
  return runSteps(toolFactSteps(messages));
}

/** {@link toolFacts} as {@link Steps}: a pause after each call. */
export function* toolFactSteps(messages: readonly CompactMessage[]): Steps<ToolFact[]> {
  const answers = yield* answeredCallsSteps(messages);
  const facts: ToolFact[] = [];
  const latest = new Map<string, ToolFact>();
  const echoes = new Map<string, { fact: ToolFact; calls: number }>();
  const dropped = new Set<ToolFact>();
  for (let index = 0; index < messages.length; index++) {
    if (index > 0) yield;
    const calls = messages[index]!.toolCalls;
    for (let position = 0; position < calls.length; position++) {
      if (position > 0) yield;
      const call = calls[position]!;
      const answer = answers.get(`${index}:${position}`);
      const result = answer && { output: answer.output, isError: answer.isError === true };
      const args = keyArguments(call.arguments);
      const done = outcome(result?.output, result?.isError);
      const signature = `${call.name}(${args.text})`;
      const fact: ToolFact = {
        message: index,
        name: call.name,
        text: `${signature} → ${done.text}`,
        argumentIds: args.ids,
        revealedIds: countRevealed(result?.output, signature),
        traits: {
          stateChanging: isStateChanging(call.name),
          failed: done.failed,
          scratch: SCRATCH.test(call.name),
          superseded: false,
        },
      };
      if (isEcho(result?.output, done.failed)) {
        // A result that only confirms the call: one line per tool and target, the latest.
        const target = echoTarget(call.arguments) ?? args.text;
        const key = `${call.name}\u0000${target}`;
        const previous = echoes.get(key);
        const count = (previous?.calls ?? 0) + 1;
        if (previous) dropped.add(previous.fact);
        fact.text = `${call.name}(${target}) → ${done.text}${count > 1 ? ` (${count} calls)` : ''}`;
        echoes.set(key, { fact, calls: count });
        facts.push(fact);
        continue;
      }
      const earlier = latest.get(signature);
      // A rerun supersedes the earlier result unless that one named ids this one does not.
      if (
        earlier &&
        !earlier.traits.stateChanging &&
        findIdentifiers(earlier.text).every((f) => fact.text.includes(f.text))
      )
        earlier.traits.superseded = true;
      latest.set(signature, fact);
      facts.push(fact);
    }
  }
  return dropped.size > 0 ? facts.filter((fact) => !dropped.has(fact)) : facts;
}

// Their machine code is dropped when the last manager shuts down (process-caches.ts).
releaseRegExpCode(
  CONTACT_KEY,
  ID_KEY,
  STATUS_KEY,
  AMOUNT_KEY,
  DATE_KEY,
  NAME_KEY,
  SCRATCH,
  FAILURE,
  CLEARED,
  CODE_LINE,
  ECHO,
  ECHO_WORDS,
);
