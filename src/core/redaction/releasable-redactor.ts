import { type Steps, TimeSlice } from '../time-slice.js';

/** A redactor (redactor.ts `Redactor`, written out: redactor.ts builds its default with this file). */
type Redactor = (text: string) => string;

/**
 * A redactor whose patterns are checked where it is configured but whose rules are compiled
 * later: by `warm()` in slices of a few milliseconds (a manager's `ready()`), or at once by the
 * first call that comes before (it finishes the same steps, so nothing goes out unredacted).
 * `release()` drops the compiled rules (a manager's `shutdown()`: the default rules take about
 * 0.3 MB of heap) and stops a warm-up under way; a call after that builds them again, with the
 * same answers.
 */
export function releasableRedactor(steps: () => Steps<Redactor>): {
  redact: Redactor;
  warm(): Promise<void>;
  release(): void;
} {
  let built: Redactor | undefined;
  let building: Steps<Redactor> | undefined;
  let releases = 0;
  /** One step of the build (`true` once it is built). */
  const step = (): boolean => {
    building ??= steps();
    const next = building.next();
    if (!next.done) return false;
    built = next.value;
    building = undefined;
    return true;
  };
  return {
    redact: (text) => {
      while (built === undefined) step();
      return built(text);
    },
    warm: async () => {
      const released = releases;
      const slice = new TimeSlice();
      while (built === undefined && releases === released && !step()) {
        if (slice.due()) await slice.pause();
      }
    },
    release: () => {
      built = undefined;
      building = undefined;
      releases++;
    },
  };
}
