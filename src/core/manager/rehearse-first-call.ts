/**
 * A fresh process's first call on a known session takes the quick path (quick-resume.ts) and
 * runs, for the first time, every function on it: V8 parses and compiles each one lazily on
 * its first run, which cost the first call of a real fresh process 15-20 times a warm call's
 * work on a plain 16k-message session. `CompactManager.ready()` rehearses that call once per
 * process (with a store outside the process: see {@link rehearseFirstCall}), on a made-up session held by a scratch manager in a store of its own: a quick record
 * written for the session, then a first call that reads it. Each piece runs after a turn of
 * the loop; the call itself compiles the quick path only (the full path's indexing, counting
 * and view compile after it, in the slices of the work a quick call leaves). Nothing of the
 * caller's sessions, store, exporters or archive is touched.
 */
import { BpeTokenCounter, type TokenCounter } from '../counting/token-counter.js';
import type { CompactPolicy } from '../policy.js';
import { countsScope } from '../preflight/index/persist-counts.js';
import { samplePrints } from '../preflight/quick/quick-print.js';
import { QUICK_FROM, ruleOf } from '../preflight/quick/quick-records.js';
import { MemorySessionStore, type SessionStore } from '../session/session-store.js';
import { writeQuickRecord } from '../store/stored-counts.js';
import { nextTurn } from '../time-slice.js';

/** What the rehearsal needs of the scratch manager. */
export interface RehearsalManager {
  readonly model: string;
  readonly counter: TokenCounter;
  readonly policy: Readonly<CompactPolicy>;
  compact(sessionId: string, messages: unknown[]): Promise<unknown>;
  cacheStatus(): { sessions: number };
  shutdown(): Promise<void>;
}

/** A short OpenAI Chat session, past the quick path's floor, with a tool call in every turn. */
function madeUpSession(): unknown[] {
  const messages: unknown[] = [{ role: 'system', content: 'You are a careful coding agent.' }];
  for (let turn = 0; messages.length < QUICK_FROM; turn++) {
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
 * A store the manager does not take for its in-process one (its calls go through the fail-open
 * wrapper and read the quick record, as with a shared store), kept in memory.
 */
function scratchStore(): SessionStore {
  const memory = new MemorySessionStore();
  return {
    name: 'rehearsal',
    get: (key) => memory.get(key),
    set: (key, state, options) => memory.set(key, state, options),
    delete: (key) => memory.delete(key),
    acquireLock: (key, ttlMs) => memory.acquireLock(key, ttlMs),
  };
}

/** Whether this process rehearsed (once per process: the compiled code is the process's). */
let rehearsed = false;

/** Whether this process rehearsed a first call (tests: `ready()` rehearses only where it serves). */
export function firstCallRehearsed(): boolean {
  return rehearsed;
}

/**
 * Whether a rehearsal serves a manager on `store`: not on the in-process `MemorySessionStore`
 * (a fresh process's knows no session; a subclass counts as outside, as for fail-open).
 */
export function rehearsalServes(store: SessionStore): boolean {
  return Object.getPrototypeOf(store) !== MemorySessionStore.prototype;
}

/**
 * Rehearses a fresh process's first call on a known session (see the file's comment), once per
 * process and only for a manager with a built-in counter (a custom one may be remote, or cost
 * per count) whose store is not the in-process one: a fresh process's in-process store knows
 * no session, so its first calls take the full path, and the quick path's code compiled for
 * nothing would stay in the heap after `shutdown()`. `make` builds a scratch manager for the
 * caller's model, with a counter of its own, on the given store. True when the rehearsal's
 * call took the quick path; a failure is ignored (the rehearsal only spares work).
 */
export async function rehearseFirstCall(
  counter: TokenCounter,
  store: SessionStore,
  make: (store: SessionStore) => RehearsalManager,
): Promise<boolean> {
  if (rehearsed || !(counter instanceof BpeTokenCounter) || !rehearsalServes(store)) return false;
  rehearsed = true;
  return rehearseQuickCall(make);
}

/** The rehearsal itself, every time it is called (tests check that its call takes the quick path). */
export async function rehearseQuickCall(make: (store: SessionStore) => RehearsalManager): Promise<boolean> {
  let manager: RehearsalManager | undefined;
  try {
    await nextTurn();
    const store = scratchStore();
    manager = make(store);
    await nextTurn();
    const history = madeUpSession();
    const n = history.length;
    // Made-up sums: the exact count after the call differs and drops the record (scratch only).
    const written = await writeQuickRecord(store, 'rehearsal', {
      scope: countsScope(manager.counter.name, manager.model, 'openai-chat'),
      rule: ruleOf(manager.policy),
      pins: '',
      length: n,
      print: samplePrints((i) => history[i], n),
      metaAt: [],
      sums: { system: 8, developer: 0, messages: 4 * n },
      pinned: 0,
    });
    if (!written) return false;
    history.push({ role: 'user', content: 'Run the tests again.' });
    await nextTurn();
    await manager.compact('rehearsal', history);
    return manager.cacheStatus().sessions === 0;
  } catch {
    return false;
  } finally {
    // Waits for the work the call left (the session indexed and counted, in slices).
    await manager?.shutdown().catch(() => undefined);
  }
}
