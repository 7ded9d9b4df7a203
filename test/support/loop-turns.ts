/**
 * Pieces of the tests that check a large input is parsed across turns of the event loop (the
 * CLI's input, the proxy's first body): a history heavy in escapes and multi-byte characters,
 * and a counter of the loop's turns while the parse runs.
 */

/** `length` messages, user and assistant by turns, each `turn {i}: ` and a piece of `é😀 "quoted" \ ` repeated `repeat` times. */
export function escapedHistory(length: number, repeat: number): { role: string; content: string }[] {
  return Array.from({ length }, (_, i) => ({
    role: i % 2 === 0 ? 'user' : 'assistant',
    content: `turn ${i}: ${'é😀 "quoted" \\ '.repeat(repeat)}`,
  }));
}

/** Runs `work`, counting the turns the event loop makes meanwhile (a `setImmediate` chain). */
export async function countLoopTurns<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let running = true;
  const turn = () => {
    turns++;
    if (running) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const result = await work();
    return { result, turns };
  } finally {
    running = false;
  }
}
