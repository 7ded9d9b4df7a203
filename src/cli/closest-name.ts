import { levenshtein } from '../config/config-issues.js';

/**
 * The candidate closest to `input` when it is close enough to be a typo (at most a third of
 * its length away, and 2 edits for short names), else `undefined`: `frobnicate` suggests
 * nothing, `comapct` suggests `compact`. A candidate that starts with `input` (`--max`) wins.
 */
export function closestName(input: string, candidates: readonly string[]): string | undefined {
  const probe = input.toLowerCase().slice(0, 64);
  if (probe.length >= 3) {
    const prefixed = candidates.filter((candidate) => candidate.startsWith(probe));
    if (prefixed.length === 1) return prefixed[0];
  }
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = levenshtein(probe, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(probe.length / 3)) ? best : undefined;
}
