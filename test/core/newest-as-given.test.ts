/**
 * Issue 43, second defect: the newest message is always sent as given. A rewind (or a switch to
 * a branch) whose last message is a tool result the manager cleared while it was old must end
 * its request with the real result, not the stored `[cleared: …]` placeholder; the same after
 * the branch grows on (the stored rewrite applies again once the result is old).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import { MemorySessionStore } from '../../src/core/session/session-store.js';

type ChatMessage = {
  role: string;
  content: string;
  tool_call_id?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
};

const SEED = Number(process.env.FC_SEED ?? 20_261_128);
const SESSION = 'rewind';

/** One tool round of step `k`: the call and its result (about 300 tokens). */
function round(k: number, branch = ''): ChatMessage[] {
  const id = `call_${branch}${k}`;
  const output = Array.from(
    { length: 24 },
    (_, line) => `search ${branch}${k} hit ${line}: /srv/app/module${k}/file${line}.ts matched`,
  ).join('\n');
  return [
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ id, type: 'function', function: { name: 'search', arguments: `{"q":"q${k}"}` } }],
    },
    { role: 'tool', tool_call_id: id, content: output },
  ];
}

function loop(rounds: number): ChatMessage[] {
  const history: ChatMessage[] = [{ role: 'user', content: 'Search the whole code base.' }];
  for (let k = 0; k < rounds; k++) history.push(...round(k));
  return history;
}

/** Grows a session to `rounds` tool rounds, one call per round, so old results get cleared. */
async function grown(manager: CompactManager, rounds: number): Promise<ChatMessage[]> {
  const history = loop(rounds);
  for (let end = 3; end <= history.length; end += 2) await manager.preflight(SESSION, history.slice(0, end));
  return history;
}

describe('the newest message is sent as given (issue 43)', () => {
  it('a rewind onto a tool result cleared while it was old ends with the real result', async () => {
    const manager = new CompactManager({
      model: 'gpt-4o',
      maxContextTokens: 6_000,
      store: new MemorySessionStore(),
      // Clearing to the target leaves many cleared results in the view (the default, clearing
      // every old one and compacting earlier, folds them into the summary sooner).
      policy: { preset: 'quality' },
    });
    const history = await grown(manager, 40);
    const state = await manager.state(SESSION);
    // The session did clear old results (the case needs them).
    expect(Object.keys(state?.rewrites ?? {}).length).toBeGreaterThan(3);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 38 }),
        fc.integer({ min: 0, max: 3 }),
        async (target, more) => {
          const at = 2 + 2 * target; // a tool result
          const given = history.slice(0, at + 1);
          const out = (await manager.preflight(SESSION, given)) as ChatMessage[];
          expect(out.at(-1), `rewind onto #${at}: the newest as given`).toEqual(given.at(-1));
          // The branch grows on from there: each newest message still goes as given.
          let branch = given;
          for (let k = 0; k < more; k++) {
            branch = [...branch, ...round(k, `b${at}_`)];
            const next = (await manager.preflight(SESSION, branch)) as ChatMessage[];
            expect(next.at(-1), `branch of #${at} + ${k + 1}: the newest as given`).toEqual(branch.at(-1));
          }
        },
      ),
      { seed: SEED, numRuns: 40, endOnFailure: true },
    );
    await manager.shutdown();
  });
});
