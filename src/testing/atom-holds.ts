/**
 * Whether a request's pieces say only what the given history holds (part 4 of the invariant in
 * `assert-sound-request.ts`): the same atom, or a placeholder for it (a cleared result, text or
 * arguments cut head and tail around the engine's marker).
 */
import type { Atom } from './request-atoms.js';

/** The text left where content was cut (the engine's marker; its exact wording is not relied on beyond this). */
const CUT_MARKER = /\n?\[agent-compaction: [\d,]+ chars cut here[^\]\n]*\]\n?/g;
const CLEARED = /^\[cleared: /;

export function sameAtoms(a: readonly Atom[], b: readonly Atom[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (atom, k) =>
        atom.kind === b[k]!.kind &&
        atom.text === b[k]!.text &&
        atom.id === b[k]!.id &&
        atom.name === b[k]!.name &&
        (atom.kind !== 'text' || atom.role === b[k]!.role),
    )
  );
}

export function describeAtoms(atoms: readonly Atom[]): string {
  const text = atoms
    .map(
      (atom) =>
        `${atom.kind}${atom.id ? ` ${atom.id}` : ''} "${atom.text.slice(0, 60)}${atom.text.length > 60 ? '…' : ''}" (${atom.text.length} chars)`,
    )
    .join(' + ');
  return text === '' ? '(nothing)' : text;
}

/** The pieces of a text around its cut markers (no markers: the text itself). */
export function piecesOf(text: string): string[] | undefined {
  if (!text.includes('[agent-compaction: ')) return undefined;
  return text
    .split(CUT_MARKER)
    .map((piece) => piece.replaceAll('\\n[', '[').replace(/^(\\n)+|(\\n)+$/g, ''))
    .filter((piece) => piece !== '');
}

/** True when every piece appears in `original`, in order (a text cut head and tail). */
function piecesIn(pieces: readonly string[], original: string): boolean {
  let from = 0;
  for (const piece of pieces) {
    const at = original.indexOf(piece, from);
    if (at < 0) return false;
    from = at + piece.length;
  }
  return true;
}

/**
 * The text a cut call's arguments stand for: the arguments as sent, or the text inside
 * `{"shortened": "..."}` (how an SDK that needs an object carries arguments cut as text).
 */
function cutArguments(sent: Atom): string {
  try {
    const parsed = JSON.parse(sent.raw ?? sent.text) as unknown;
    if (parsed && typeof parsed === 'object' && Object.keys(parsed).length === 1) {
      const shortened = (parsed as { shortened?: unknown }).shortened;
      if (typeof shortened === 'string') return shortened;
    }
  } catch {
    // Not JSON: arguments cut as text.
  }
  return sent.raw ?? sent.text;
}

/** Whether a request atom says only what a given atom holds. */
export function holds(sent: Atom, held: Atom): boolean {
  if (sent.kind !== held.kind) return false;
  if (sent.kind === 'text' && sent.role !== held.role) return false;
  if (sent.kind !== 'text' && (sent.id !== held.id || (sent.kind === 'call' && sent.name !== held.name)))
    return false;
  if (sent.text === held.text) return true;
  if (sent.kind === 'result' && CLEARED.test(sent.text)) return true;
  const pieces = piecesOf(sent.text);
  if (pieces !== undefined && piecesIn(pieces, held.text)) return true;
  if (sent.kind !== 'call') return false;
  // Arguments cut as text (not JSON-aware): compared with the arguments as given.
  const raw = piecesOf(cutArguments(sent));
  return raw !== undefined && piecesIn(raw, held.raw ?? held.text);
}
