/**
 * Issue 47 point 5: a call that remembers a protected message writes a state (pins do not move
 * the version), and the view it leaves must be the one the next call can extend. The view took
 * no notice of the write, so the next call found another state than its view's and rebuilt the
 * view whole (about 0.9 s in one block at 100k messages); the exact view that replaces a first
 * call's bound view was built under the state read before the write, with the same effect.
 */
import { describe, expect, it } from 'vitest';
import { tokenCounterFor } from '../../counting/token-counter.js';
import { codecFor } from '../../messages/formats/detect-format.js';
import { MessageIndex } from '../../messages/message-index.js';
import { DEFAULT_POLICY } from '../../policy.js';
import { MemorySessionStore, type SessionState } from '../../session/session-store.js';
import { finishExact } from '../index/bound-first-call.js';
import { IndexedHistory } from '../index/index-request.js';
import { rememberProtected } from './remember-protected.js';
import { buildView, type ViewContext, viewIsReusable } from './resume-view.js';
import type { SessionView } from './session-view.js';

const counter = tokenCounterFor('gpt-4o');

function historyOf(length: number): unknown[] {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a careful assistant.' },
    { role: 'user', content: 'Never touch the production database.', meta: { protected: true } },
  ];
  for (let i = 0; messages.length < length; i++)
    messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: `turn ${i}: check build b${i}` });
  return messages;
}

function indexedOf(history: unknown[]) {
  const codec = codecFor(history, undefined);
  const indexed = new IndexedHistory();
  indexed.update(history, codec, new MessageIndex());
  const context = (state: SessionState | undefined): ViewContext => ({
    history: indexed,
    state,
    rule: DEFAULT_POLICY,
    codec,
    counter,
    realize: () => {
      throw new Error('no rewrite expected');
    },
    fresh: { count: 0 },
    trust: () => undefined,
  });
  return { indexed, context };
}

/** What the request and the next steps read of a view. */
function shape(view: SessionView) {
  return {
    entries: view.entries.map((entry) => [entry.item.id, entry.pinned, entry.tokens, entry.round]),
    pinnedIds: [...view.pinnedIds].sort(),
    pinnedRounds: [...view.pinnedRounds].sort(),
    coveredIds: [...view.coveredIds],
    matched: view.matched,
    nextVersion: view.nextVersion,
    version: view.version,
    previousSummary: view.previousSummary,
    sums: view.sums,
  };
}

describe('rememberProtected', () => {
  it('leaves the view holding the state it wrote, as a rebuild under that state gives', async () => {
    const { indexed, context } = indexedOf(historyOf(40));
    const store = new MemorySessionStore();
    const view = buildView(context(undefined));
    const written = await rememberProtected(store, 's', view, undefined);
    expect(written?.pinnedIds).toEqual([indexed.items.at(1)!.id]);
    expect(await store.get('s')).toEqual(written);
    // The next call reads the written state: its view is the one left, extended.
    expect(viewIsReusable(view, context(written), indexed.length)).toBe(true);
    expect(shape(view)).toEqual(shape(buildView(context(written))));
    // Nothing new to remember: no second write.
    expect(await rememberProtected(store, 's', view, written)).toBe(written);
  });

  it('builds the exact view after a bound first call under the state that call wrote', async () => {
    const { indexed, context } = indexedOf(historyOf(40));
    const store = new MemorySessionStore();
    const boundView = buildView(context(undefined));
    indexed.view = boundView;
    const written = await rememberProtected(store, 's', boundView, undefined);
    expect(written).toBeDefined();
    const finished = await finishExact({
      history: indexed,
      boundView,
      context: context(undefined),
      stored: undefined,
      known: undefined,
      current: () => true,
    });
    expect(finished).toBe(true);
    const exact = indexed.view;
    expect(exact).not.toBe(boundView);
    expect(viewIsReusable(exact, context(written), indexed.length)).toBe(true);
    expect(shape(exact!)).toEqual(shape(buildView(context(written))));
  });
});
