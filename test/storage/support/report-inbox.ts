/** Reports received from worker processes, and promises that resolve on the first match. */
export class ReportInbox<R> {
  /** Every report so far, in arrival order. */
  readonly reports: R[] = [];
  readonly #listeners = new Set<() => void>();

  /** Records one report and wakes the waiters. */
  push(report: R): void {
    this.reports.push(report);
    for (const listener of [...this.#listeners]) listener();
  }

  /** Resolves with the first report (already received or to come) that matches. */
  until<T extends R>(match: (report: R) => report is T): Promise<T>;
  until(match: (report: R) => boolean): Promise<R>;
  until(match: (report: R) => boolean): Promise<R> {
    return new Promise((resolve) => {
      const check = () => {
        const found = this.reports.find(match);
        if (!found) return;
        this.#listeners.delete(check);
        resolve(found);
      };
      this.#listeners.add(check);
      check();
    });
  }
}
