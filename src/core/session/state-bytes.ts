import { isPackedField, type PackedShapes, packedShapesOf } from './packed-state.js';
import type { SessionState } from './session-state.js';

/** Rough bytes of a state as JSON (strings counted by length). */
export function stateBytes(state: SessionState | undefined): number {
  if (!state) return 0;
  let bytes = 200 + (state.summary?.text.length ?? 0);
  // Lists not read yet from their packed form (packed-state.ts): their text.
  const packed = packedShapesOf(state);
  if (packed !== undefined) return bytes + packedBytes(state, packed);
  for (const id of state.coveredIds ?? []) bytes += id.length + 3;
  for (const id of state.keptIds ?? []) bytes += id.length + 3;
  for (const id of state.pinnedIds ?? []) bytes += id.length + 3;
  for (const id of Object.keys(state.rewrites ?? {})) bytes += id.length + 80;
  // The earlier states kept for rewinds and forks count too (see SessionState.branches).
  for (const branch of state.branches ?? []) bytes += stateBytes(branch);
  return bytes;
}

/** {@link stateBytes} of a state read from its packed form, its packed lists by their text. */
function packedBytes(state: SessionState, packed: PackedShapes): number {
  let bytes = 0;
  for (const shape of Object.values(packed)) bytes += shape.chars + 3 * shape.count;
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(state))
    if (!isPackedField(state, key)) rest[key] = (state as unknown as Record<string, unknown>)[key];
  return bytes + stateBytes(rest as unknown as SessionState) - 200;
}
