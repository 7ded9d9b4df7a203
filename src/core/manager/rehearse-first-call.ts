/**
 * A fresh process's first call on a known session runs, for the first time, every function on
 * the quick path (quick-resume.ts): V8 compiles each one on its first run, which costs a fresh
 * process many times a warm call's work. `CompactManager.ready()` rehearses that call, in turns
 * of its own, on a small made-up session held by two scratch managers in a store of their own:
 * the first one's calls leave the session's quick record, the second one's first call reads it
 * as a fresh process would. Nothing of the caller's sessions, store, exporters or archive is
 * touched; the counter's shared tables are the ones `ready()` just loaded.
 */
import { BpeTokenCounter, type TokenCounter } from '../counting/token-counter.js';
import type {
  SessionLock,
  SessionState,
  SessionStore,
  SessionStoreSetOptions,
} from '../session/session-store.js';
import { MemorySessionStore } from '../session/session-store.js';

/** What the rehearsal needs of a manager. */
export interface RehearsalManager {
  compact(sessionId: string, messages: readonly unknown[]): Promise<unknown>;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Turns of the made-up session: past the quick path's floor (256 messages). */
const TURNS = 66;

/** A short OpenAI Chat session with a tool call in every turn. */
function madeUpSession(): unknown[] {
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful coding agent.' }];
  for (let turn = 0; turn < TURNS; turn++) {
    const id = `call_${turn}`;
    messages.push(
      { role: 'user', content: `Step ${turn}: read the file and fix the failing test.` },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id, type: 'function', function: { name: 'read_file', arguments: `{"path":"src/f${turn}.ts"}` } },
        ],
      },
      { role: 'tool', tool_call_id: id, content: `export const f${turn} = () => ${turn};` },
      { role: 'assistant', content: `The file exports f${turn}; the test passes now.` },
    );
  }
  return messages;
}

/**
 * A store that is not the in-process one to the manager (so its calls take the fail-open
 * store's path, as a shared store's do), kept in memory.
 */
function scratchStore(): SessionStore {
  const memory = new MemorySessionStore();
  return {
    name: 'rehearsal',
    get: (id: string): Promise<SessionState | undefined> => memory.get(id),
    set: (id: string, state: SessionState, options?: SessionStoreSetOptions) =>
      memory.set(id, state, options),
    delete: (id: string) => memory.delete(id),
    acquireLock: (id: string, ttlMs: number): Promise<SessionLock | undefined> =>
      memory.acquireLock(id, ttlMs),
  };
}

/** Whether this process rehearsed (once per process: the compiled code is the process's). */
let rehearsed = false;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs a warm manager's calls, then a fresh manager's first call, on a made-up session
 * (`make` builds a scratch manager with `counter` on the given store), once per process and
 * only with a built-in counter (a custom one may be remote, or cost money per count). Each
 * step in a turn of its own; a failure is ignored (the rehearsal only spares work).
 */
export async function rehearseFirstCall(
  counter: TokenCounter,
  make: (store: SessionStore) => RehearsalManager,
): Promise<void> {
  if (rehearsed || !(counter instanceof BpeTokenCounter)) return;
  rehearsed = true;
  const store = scratchStore();
  const history = madeUpSession();
  const managers: RehearsalManager[] = [];
  try {
    const warm = make(store);
    managers.push(warm);
    await warm.compact('rehearsal', history);
    await warm.flush();
    await turn();
    history.push({ role: 'user', content: 'Run the tests again.' });
    const fresh = make(store);
    managers.push(fresh);
    await fresh.compact('rehearsal', history);
    await fresh.flush();
  } catch {
    // Nothing to report: the first real call compiles what the rehearsal did not.
  } finally {
    for (const manager of managers) await manager.shutdown().catch(() => undefined);
  }
}
