/** Seeded choices the eval's session generators share (`rand` is a seeded random in [0, 1)). */
export type Random = () => number;

/** One element of `list`. */
export const pick = <T>(rand: Random, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

/** An integer from `min` to `max`, both included. */
export const int = (rand: Random, min: number, max: number) => min + Math.floor(rand() * (max - min + 1));

/** A shuffled copy of `list` (Fisher-Yates). */
export function shuffle<T>(rand: Random, list: readonly T[]): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
