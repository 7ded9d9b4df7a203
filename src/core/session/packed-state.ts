/**
 * A long session's state as the manager writes it to a store outside the process: each long
 * list (covered, pinned, kept and user-text ids, rewrites) packed into one counted string
 * under `packed` ({@link PackedLists}), its own field left empty. A store parses a few long
 * strings instead of thousands of short ones (a compacted 16k-message session's state: about
 * 16,000 ids and 1,800 rewrites), the state's checks look at a few strings, and the lists are
 * split into ids only when something reads them: a fresh process's quick first call of a
 * compacted session reads their counts only (preflight/quick/quick-compacted.ts).
 *
 * A state read back is unpacked by {@link unpackState}: the lists become fields read on first
 * use (then kept). A state in the earlier form (every list as an array) reads as it is; a
 * malformed `packed` is left in place for the store's check (`storedStateProblem`), which
 * rejects the state (it is deleted and the session starts over, as any malformed state).
 */
import { asciiSummary, readAsciiSummary } from './ascii-summary.js';
import type { PackedList, PackedLists, SessionRewrite, SessionState } from './session-state.js';

/** Entries from which a list is packed (a shorter one is written as it is). */
export const PACK_FROM = 64;

/** The id lists packed, in the order they are checked. */
const ID_LISTS = ['coveredIds', 'pinnedIds', 'keptIds', 'userTextIds'] as const;
type IdList = (typeof ID_LISTS)[number];
type PackedField = IdList | 'rewrites';
const PACKED_FIELDS: ReadonlySet<string> = new Set<string>([...ID_LISTS, 'rewrites']);

/** The size of a packed list: its entries and the characters of its text. */
export interface PackedShape {
  readonly count: number;
  readonly chars: number;
}
/** The lists an unpacked state reads on first use, by field (their texts are not kept once read). */
export type PackedShapes = Readonly<Partial<Record<PackedField, PackedShape>>>;
const FROM_PACKED: unique symbol = Symbol('agent-compaction.packedShapes');
type Unpacked = SessionState & { [FROM_PACKED]?: PackedShapes };

const REWRITE_KINDS: ReadonlySet<string> = new Set(['cleared', 'shortened', 'cut']);
const REWRITE_KEYS: ReadonlySet<string> = new Set(['kind', 'ref', 'keepChars', 'hash', 'unarchived']);
const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Ids joined by spaces: none may hold one. */
function packIds(ids: readonly string[]): PackedList | undefined {
  for (const id of ids) if (typeof id !== 'string' || id.includes(' ')) return undefined;
  return { count: ids.length, text: ids.join(' ') };
}

const plainText = (value: unknown): value is string =>
  typeof value === 'string' && !value.includes('\t') && !value.includes('\n');

/** One rewrite as a line: id, kind, ref, keepChars, hash, unarchived (`1`/`0`), tab-separated. */
function rewriteLine(id: string, rewrite: SessionRewrite): string | undefined {
  if (!isObject(rewrite) || !plainText(id) || !REWRITE_KINDS.has(rewrite.kind as string)) return undefined;
  for (const key of Object.keys(rewrite)) if (!REWRITE_KEYS.has(key)) return undefined;
  const { ref, keepChars, hash, unarchived } = rewrite;
  if (!plainText(ref) || (hash !== undefined && !plainText(hash))) return undefined;
  if (keepChars !== undefined && !isCount(keepChars)) return undefined;
  if (unarchived !== undefined && typeof unarchived !== 'boolean') return undefined;
  const flag = unarchived === undefined ? '' : unarchived ? '1' : '0';
  return `${id}\t${rewrite.kind}\t${ref}\t${keepChars ?? ''}\t${hash ?? ''}\t${flag}`;
}

function packRewrites(rewrites: Record<string, SessionRewrite>): PackedList | undefined {
  const lines: string[] = [];
  for (const [id, rewrite] of Object.entries(rewrites)) {
    const line = rewriteLine(id, rewrite);
    if (line === undefined) return undefined;
    lines.push(line);
  }
  return { count: lines.length, text: lines.join('\n') };
}

/**
 * The form of `state` written to a store: its lists of at least {@link PACK_FROM} entries
 * packed (see the file comment), its branches' too; `state` itself when none is that long.
 * A list that cannot be packed (an id with a space, a rewrite of another shape) stays as it is.
 */
export function packState(state: SessionState): SessionState {
  let packed: PackedLists | undefined;
  let out: SessionState | undefined;
  for (const field of ID_LISTS) {
    const ids = state[field];
    const list = Array.isArray(ids) && ids.length >= PACK_FROM ? packIds(ids) : undefined;
    if (list === undefined) continue;
    packed ??= { v: 1 };
    out ??= { ...state };
    packed[field] = list;
    out[field] = [];
  }
  const rewrites = state.rewrites;
  if (isObject(rewrites) && Object.keys(rewrites).length >= PACK_FROM) {
    const list = packRewrites(rewrites);
    if (list !== undefined) {
      packed ??= { v: 1 };
      out ??= { ...state };
      packed.rewrites = list;
      out.rewrites = {};
    }
  }
  if (Array.isArray(state.branches)) {
    const branches = state.branches.map(packState);
    if (branches.some((branch, i) => branch !== state.branches![i])) {
      out ??= { ...state };
      out.branches = branches;
    }
  }
  if (packed === undefined) return out ?? state;
  out!.packed = packed;
  // Its JSON in ASCII: one character that is not makes a reader decode all of it to two bytes a unit.
  if (state.summary !== undefined) out!.summary = asciiSummary(state.summary, state.version);
  return out!;
}

/** What is wrong with a state's `packed` field (`undefined`: well formed). */
export function packedProblem(packed: unknown): string | undefined {
  if (!isObject(packed) || packed.v !== 1) return 'packed is not a packed list of version 1';
  for (const [field, list] of Object.entries(packed)) {
    if (field === 'v') continue;
    if (!PACKED_FIELDS.has(field)) return `packed.${field} is not a packed list`;
    if (!isObject(list) || !isCount(list.count) || typeof list.text !== 'string')
      return `packed.${field} is not a count and a text`;
    // n entries need n - 1 separators; none is an empty text.
    if (list.count === 0 ? list.text !== '' : list.text.length < list.count - 1)
      return `packed.${field}.text is shorter than its count`;
  }
  return undefined;
}

/** The ids of a packed list. */
function unpackIds(list: PackedList): string[] {
  return list.count === 0 ? [] : list.text.split(' ');
}

/** The rewrites of a packed list; a line that does not read as a rewrite is left out. */
function unpackRewrites(list: PackedList): Record<string, SessionRewrite> {
  const entries: [string, SessionRewrite][] = [];
  if (list.count > 0)
    for (const line of list.text.split('\n')) {
      const [id, kind, ref, keepChars, hash, flag, extra] = line.split('\t');
      if (id === undefined || flag === undefined || extra !== undefined || !REWRITE_KINDS.has(kind!))
        continue;
      const rewrite: SessionRewrite = { kind: kind as SessionRewrite['kind'], ref: ref! };
      if (keepChars !== '') {
        const chars = Number(keepChars);
        if (!isCount(chars)) continue;
        rewrite.keepChars = chars;
      }
      if (hash !== '') rewrite.hash = hash!;
      if (flag !== '') rewrite.unarchived = flag === '1';
      entries.push([id, rewrite]);
    }
  // Own data properties whatever the id (`__proto__` included), as JSON.parse makes them.
  return Object.fromEntries(entries);
}

/** True for a missing list or an empty one (array or rewrites object). */
function isEmptyList(value: unknown): boolean {
  if (value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

/** A field read from a packed list on first use: the list until then, its value after. */
interface LazyList {
  list: PackedList | undefined;
  value: unknown;
}
const LAZY_LISTS: unique symbol = Symbol('agent-compaction.lazyLists');

/** A list read from its packed form into a state frozen meanwhile: frozen too (as `deepFreeze`). */
function freezeList(value: unknown): void {
  if (!Array.isArray(value)) for (const rewrite of Object.values(value as object)) Object.freeze(rewrite);
  Object.freeze(value);
}

/**
 * Defines `field` on `target` as read on first use from `packed`, then kept (the text let go);
 * frozen when read if `target` is frozen by then (see {@link valuesToFreeze}).
 */
function lazyField(
  target: object,
  field: PackedField,
  packed: PackedList,
  lazies: Map<string, LazyList>,
): void {
  const lazy: LazyList = { list: packed, value: undefined };
  lazies.set(field, lazy);
  Object.defineProperty(target, field, {
    enumerable: true,
    configurable: true,
    get() {
      if (lazy.list !== undefined) {
        lazy.value = field === 'rewrites' ? unpackRewrites(lazy.list) : unpackIds(lazy.list);
        lazy.list = undefined;
        if (Object.isFrozen(target)) freezeList(lazy.value);
      }
      return lazy.value;
    },
  });
}

/**
 * The values of `value`'s own enumerable fields (`Object.values`), less the packed lists of an
 * unpacked state not read yet: a deep freeze of a state read from the store (held for later
 * reads, store/read-revisions.ts) leaves its lists packed, and each is frozen when read.
 */
export function valuesToFreeze(value: object): unknown[] {
  const lazies = (value as { [LAZY_LISTS]?: Map<string, LazyList> })[LAZY_LISTS];
  if (lazies === undefined) return Object.values(value);
  const values: unknown[] = [];
  for (const key of Object.keys(value)) {
    const lazy = lazies.get(key);
    if (lazy === undefined) values.push((value as Record<string, unknown>)[key]);
    else if (lazy.list === undefined) values.push(lazy.value);
  }
  return values;
}

/**
 * The state a store holds (`stored`, as read back), its packed lists made fields read on first
 * use (see the file comment); `stored` itself when nothing in it is packed, or when its
 * `packed` is malformed (the store's check then rejects it).
 */
export function unpackState(stored: SessionState): SessionState {
  if (!isObject(stored)) return stored;
  const packed = (stored as { packed?: unknown }).packed;
  const branches = stored.branches as unknown;
  const packedBranches = Array.isArray(branches) && branches.some((b) => isObject(b) && 'packed' in b);
  if ((packed === undefined && !packedBranches) || (packed !== undefined && packedProblem(packed)))
    return stored;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(stored))
    if (key !== 'packed') out[key] = (stored as unknown as Record<string, unknown>)[key];
  if (packedBranches)
    out.branches = (branches as unknown[]).map((b) =>
      isObject(b) ? unpackState(b as unknown as SessionState) : b,
    );
  if (isObject(packed)) {
    if (out.summary !== undefined) out.summary = readAsciiSummary(out.summary, out.version);
    const lists = packed as unknown as PackedLists;
    const shapes: Partial<Record<PackedField, PackedShape>> = {};
    const lazies = new Map<string, LazyList>();
    for (const field of PACKED_FIELDS) {
      const list = lists[field as PackedField];
      // A list this library packed is written empty beside it: a filled one was written by a
      // process that does not pack (an earlier version sharing the store, which carried the
      // `packed` field it read over unchanged), and it is the newer of the two.
      if (list === undefined || !isEmptyList(out[field])) continue;
      lazyField(out, field as PackedField, list, lazies);
      shapes[field as PackedField] = { count: list.count, chars: list.text.length };
    }
    Object.defineProperty(out, FROM_PACKED, { value: shapes });
    Object.defineProperty(out, LAZY_LISTS, { value: lazies });
  }
  return out as unknown as SessionState;
}

/** The packed lists an unpacked state reads on first use (`undefined`: none). */
export function packedShapesOf(state: object): PackedShapes | undefined {
  return (state as Unpacked)[FROM_PACKED];
}

/**
 * The number of entries of one of the state's lists, without reading a packed one (its stored
 * count: a count that does not match its text only makes the state's stamp differ).
 */
export function listLength(state: SessionState, field: IdList): number {
  return packedShapesOf(state)?.[field]?.count ?? state[field]?.length ?? 0;
}

/** True when `field` of `state` is read from a packed list on first use. */
export function isPackedField(state: object, field: string): boolean {
  const shapes = packedShapesOf(state);
  return shapes !== undefined && PACKED_FIELDS.has(field) && shapes[field as PackedField] !== undefined;
}
