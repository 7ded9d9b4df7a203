/**
 * Warm calls on a plain chat history (`{role, content}` messages, no `meta`, no tool calls) at
 * 1k and 100k messages, one message appended per call, with a loop turn between calls and back
 * to back (issue 47 point 5): `npx tsx bench/plain-warm.ts`. Such a history told no format, so
 * every call read it whole to detect one (O(n): about 1-2 ms at 100k), and its request goes
 * exactly as given, so no copy of it is made (the caller's own array comes back).
 */
import { CompactManager } from '../src/index.js';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const message = (i: number) => ({
  role: i % 2 === 0 ? 'user' : 'assistant',
  content: `message ${i}: the deploy of service s${i % 31} waits on ticket T-${1000 + i}`,
});

/** Median ms per warm call at `size` messages (the first 30 calls not counted). */
async function warmAt(size: number, modelTurn: boolean, calls = 150): Promise<number> {
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 2_000_000_000 });
  const history = Array.from({ length: size }, (_, i) => message(i));
  await manager.compact('plain', history);
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    history.push(message(size + i));
    const t = performance.now();
    await manager.preflight('plain', history);
    times.push(performance.now() - t);
    if (modelTurn) await new Promise((resolve) => setImmediate(resolve));
  }
  await manager.shutdown();
  return median(times.slice(30));
}

const rows: string[] = [];
for (const size of [1_000, 100_000]) {
  const turn = await warmAt(size, true);
  const backToBack = await warmAt(size, false);
  rows.push(
    `${size.toLocaleString('en')} messages: with a loop turn ${turn.toFixed(3)} ms, back to back ${backToBack.toFixed(3)} ms`,
  );
}
console.log(`Plain chat, warm appended (median per call):\n  ${rows.join('\n  ')}`);
