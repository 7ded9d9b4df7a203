/** Reports replay progress: one updating bar on a terminal, a few plain lines otherwise. */
export interface Progress {
  update(done: number, compactions: number): void;
  finish(): void;
}

const BAR_WIDTH = 30;

/**
 * A progress reporter over `write` (stderr): on a terminal a bar redrawn in place (at most
 * every 100 ms), otherwise a plain line at each tenth of the work, so logs stay short.
 */
export function createProgress(total: number, write: (text: string) => void, isTTY: boolean): Progress {
  let lastDraw = 0;
  let lastTenth = 0;
  let drawn = false;
  const line = (done: number, compactions: number) =>
    `replay: call ${done}/${total} (${total === 0 ? 100 : Math.floor((done / total) * 100)}%), ${compactions} compaction${compactions === 1 ? '' : 's'}`;
  return {
    update(done, compactions) {
      if (isTTY) {
        const now = Date.now();
        if (done < total && now - lastDraw < 100) return;
        lastDraw = now;
        const filled = total === 0 ? BAR_WIDTH : Math.round((done / total) * BAR_WIDTH);
        write(`\r[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${line(done, compactions)}`);
        drawn = true;
        return;
      }
      const tenth = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (tenth > lastTenth || done === total) {
        lastTenth = tenth;
        write(`${line(done, compactions)}\n`);
      }
    },
    finish() {
      if (isTTY && drawn) write('\n');
    },
  };
}
