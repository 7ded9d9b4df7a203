import { describe, expect, it } from 'vitest';
import { KnownConversations } from './known-conversations.js';

const opening = { role: 'user', content: 'Hello, how can you help?' };
/** A conversation's history after `turns` turns of its own. */
const history = (name: string, turns: number) => [
  opening,
  ...Array.from({ length: turns }, (_, turn) => ({ role: 'user', content: `${name} turn ${turn}` })),
];

/** Two conversations with the same opening, alternating; the sessions of the last round. */
async function alternate(known: KnownConversations, bytes: number) {
  const sessions: string[] = [];
  for (let turn = 1; turn <= 4; turn++) {
    sessions[0] = await known.sessionOf('openai-chat', 'fp-same', history('A', turn), undefined, bytes);
    sessions[1] = await known.sessionOf('openai-chat', 'fp-same', history('B', turn), undefined, bytes);
  }
  return sessions;
}

describe('KnownConversations', () => {
  it('tells alternating conversations that open alike apart', async () => {
    const [a, b] = await alternate(new KnownConversations(), 1_000);
    expect(a).not.toBe(b);
  });

  it('holds no more than its bytes of bodies: past them, the least recently seen are forgotten', async () => {
    // Each body of 1,000 bytes, 1,500 held in all: the other conversation is forgotten each
    // time, so the two share the fingerprint's session, as before they were told apart.
    const [a, b] = await alternate(new KnownConversations(1_500), 1_000);
    expect(a).toBe('fp-same');
    expect(b).toBe('fp-same');
    // Within the bound they part again.
    const [c, d] = await alternate(new KnownConversations(2_000), 1_000);
    expect(c).not.toBe(d);
  });

  it('forgets older fingerprints before the current one', async () => {
    const known = new KnownConversations(3_000);
    for (const fingerprint of ['fp-1', 'fp-2', 'fp-3', 'fp-4'])
      await known.sessionOf('openai-chat', fingerprint, history(fingerprint, 1), undefined, 1_000);
    // The newest, fp-4, is still known: its alternating twin parts from it.
    const [a, b] = await alternate(known, 1_000);
    expect(a).not.toBe(b);
  });
});
