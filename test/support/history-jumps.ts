/**
 * Conversations whose every message carries a marker (`mk-a17u`: conversation `a`, turn 17,
 * user; `r` a tool result, `a` an assistant answer), for tests that check a request names only
 * what the history it was given holds (issue 33).
 */

/** A chat message (OpenAI chat shape; with string content, also Anthropic's). */
export interface ChatMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

const WORDS = (
  'the build fails on the second run because the cache key ignores the lockfile so we should ' +
  'hash it together with the node version and keep the old entries for a week before pruning them'
).split(' ');

function filler(seed: number, words: number): string {
  const out: string[] = [];
  for (let k = 0; k < words; k++) out.push(WORDS[(seed * 7 + k * 3) % WORDS.length]!);
  return out.join(' ');
}

/**
 * `n` turns of conversation `tag`: a user message and an assistant answer, with a tool round
 * between them when `tools` (ids `call_0`, `call_1`, ... numbered per conversation, as many
 * SDKs do, so two conversations reuse the same ids).
 */
export function turnsOf(tag: string, n: number, options: { tools?: boolean } = {}): ChatMessage[][] {
  const turns: ChatMessage[][] = [];
  for (let k = 0; k < n; k++) {
    const turn: ChatMessage[] = [{ role: 'user', content: `mk-${tag}${k}u: ${filler(k, 60)}` }];
    if (options.tools) {
      const id = `call_${k}`;
      turn.push(
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id,
              type: 'function',
              function: { name: 'read_file', arguments: JSON.stringify({ path: `src/${tag}/f${k}.ts` }) },
            },
          ],
        },
        { role: 'tool', tool_call_id: id, content: `mk-${tag}${k}r: ${filler(k + 1, 120)}` },
      );
    }
    turn.push({ role: 'assistant', content: `mk-${tag}${k}a: ${filler(k + 2, 150)}` });
    turns.push(turn);
  }
  return turns;
}

/** Every marker in `text`. */
export function markersIn(text: string): Set<string> {
  return new Set(text.match(/mk-[a-z0-9]+/g) ?? []);
}

/** Every marker a history holds (its messages, and the summaries it carries). */
export function historyMarkers(history: readonly unknown[]): Set<string> {
  return markersIn(JSON.stringify(history));
}

/**
 * Markers of `output` that no message of `given` holds. A marker cut short by a summarizer
 * (`mk-a1` of `mk-a17u`) counts as held when it starts one that is.
 */
export function foreignMarkers(given: readonly unknown[], output: readonly unknown[]): string[] {
  const allowed = [...historyMarkers(given)];
  return [...historyMarkers(output)].filter((marker) => !allowed.some((known) => known.startsWith(marker)));
}

/** Every call followed by its results, every result after its call. */
export function pairingHolds(out: readonly ChatMessage[]): boolean {
  for (let k = 0; k < out.length; k++) {
    const calls = out[k]!.tool_calls ?? [];
    for (let c = 0; c < calls.length; c++) if (out[k + 1 + c]?.tool_call_id !== calls[c]!.id) return false;
    if (out[k]!.role === 'tool') {
      let j = k - 1;
      while (j >= 0 && out[j]!.role === 'tool') j--;
      if (!(out[j]?.tool_calls ?? []).some((call) => call.id === out[k]!.tool_call_id)) return false;
    }
  }
  return true;
}
