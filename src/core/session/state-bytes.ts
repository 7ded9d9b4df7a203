import type { SessionState } from './session-state.js';

/** Rough bytes of a state as JSON (strings counted by length). */
export function stateBytes(state: SessionState | undefined): number {
  if (!state) return 0;
  let bytes = 200 + (state.summary?.text.length ?? 0);
  for (const id of state.coveredIds) bytes += id.length + 3;
  for (const id of state.keptIds ?? []) bytes += id.length + 3;
  for (const id of state.pinnedIds ?? []) bytes += id.length + 3;
  for (const id of Object.keys(state.rewrites ?? {})) bytes += id.length + 80;
  // The earlier states kept for rewinds and forks count too (see SessionState.branches).
  for (const branch of state.branches ?? []) bytes += stateBytes(branch);
  return bytes;
}
