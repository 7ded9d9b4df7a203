/**
 * The child processes of bench/queue.ts (agents and workers): forked under tsx, their reports
 * stamped where they arrive (when the child did not stamp them) and waited for by match.
 */
import { type ChildProcess, fork } from 'node:child_process';

/** A forked child, the reports it sent so far, and who waits for the next matching one. */
export interface Child<R> {
  process: ChildProcess;
  reports: R[];
  waiters: ((report: R) => boolean)[];
}

export function spawnChild<R extends { type: string }>(
  file: string,
  env: Record<string, string>,
): Promise<Child<R>> {
  const child: Child<R> = {
    process: fork(file, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
    reports: [],
    waiters: [],
  };
  child.process.on('message', (report: R) => {
    (report as { at?: number }).at ??= Date.now();
    child.reports.push(report);
    child.waiters = child.waiters.filter((waiter) => !waiter(report));
  });
  return next(child, (r) => r.type === 'ready').then(() => child);
}

export function next<R>(child: Child<R>, match: (report: R) => boolean): Promise<R> {
  return new Promise((resolve) =>
    child.waiters.push((report) => {
      if (!match(report)) return false;
      resolve(report);
      return true;
    }),
  );
}

export function stop(child: Child<unknown>): Promise<void> {
  const { process: p } = child;
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => p.kill('SIGKILL'), 10_000);
    p.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    if (p.connected) p.disconnect();
  });
}
