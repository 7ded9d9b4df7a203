/**
 * How bench/proxy.ts schedules its processes while the calls run (`PROXY_BENCH_PRIORITY`), and
 * `PROXY_BENCH_THREADS=1`: the proxy's CPU per thread over the calls (Linux).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * How the bench's processes are scheduled while the calls run (`PROXY_BENCH_PRIORITY`):
 * `none` (default: the machine is shared); `fifo`: `SCHED_FIFO`, each process's main thread at
 * 2 and its other threads (V8's GC helpers, libuv's pool) at 1, so a process woken by a byte
 * runs at once instead of waiting behind the machine's other work, and a helper never holds a
 * main thread off a core (as on a machine with a core to spare for them). Main threads pinned
 * to one core and helpers to the other gave longer tails here (p95 27 ms against 11-13 ms);
 * every thread at one priority did not avoid the guard below. Guarded: a thread that runs
 * `PROXY_BENCH_RTTIME_US` (2 s) without a sleep is stopped by `RLIMIT_RTTIME` (SIGXCPU) rather
 * than starve the machine, and the run is then made again at normal priority (said beside
 * the figures). This trips in about half the runs here, in the proxy, the upstream or the
 * relay alike: at this rate of calls a process is woken again before it is off the run queue,
 * which the kernel does not count as a sleep. `nice` (-20, every thread: no help where the
 * machine's other work sits in other cgroups, as here). Back to normal after the calls (and a
 * child exits when the bench is gone).
 */
/** How the bench's processes are scheduled during the calls. */
export type Priority = 'fifo' | 'nice' | 'none';
const RTTIME_US = Number(process.env.PROXY_BENCH_RTTIME_US ?? 2_000_000);
let PRIORITY = (process.env.PROXY_BENCH_PRIORITY ?? 'none') as Priority;

/** The mode in use. */
export const priorityMode = (): Priority => PRIORITY;
/** Sets the mode (a run stopped by the guard is made again with `none`). */
export const setPriorityMode = (mode: Priority): void => {
  PRIORITY = mode;
};

/** Gives `pids` (every thread) the bench's priority, or takes it back; says what it did. */
const threadTicks = (pid: number) =>
  readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [tid, Number(fields[11]) + Number(fields[12])] as const;
  });
let ticksBefore = new Map<string, number>();
export function prioritize(pids: { proxy: number; others: number[] }, on: boolean): string {
  if (process.env.PROXY_BENCH_THREADS === '1') {
    const now = threadTicks(pids.proxy);
    if (on) ticksBefore = new Map(now);
    else
      console.log(
        'proxy threads CPU ms over the pairs:',
        now.map(([tid, t]) => `${tid}:${(t - (ticksBefore.get(tid) ?? 0)) * 10}`).join(' '),
      );
  }
  const all = [pids.proxy, ...pids.others];
  try {
    if (PRIORITY === 'none') return 'normal priority';
    // A guard on the real-time policy: a thread that holds a core for 2 s without blocking
    // gets SIGXCPU (its process ends and the run fails) instead of starving the machine.
    if (PRIORITY === 'fifo' && on)
      for (const pid of all)
        execFileSync('prlimit', [`--pid=${pid}`, `--rttime=${RTTIME_US}:${RTTIME_US * 1.5}`], {
          stdio: 'ignore',
        });
    for (const pid of all)
      for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
        if (PRIORITY === 'nice') setPriority(tid, on ? -20 : 0);
        else {
          const policy = on ? ['-f', tid === pid ? '2' : '1'] : ['-o', '0'];
          execFileSync('chrt', ['-p', ...policy, String(tid)], { stdio: 'ignore' });
        }
      }
    return PRIORITY === 'fifo'
      ? 'SCHED_FIFO: main threads at 2, other threads at 1'
      : 'nice -20, every thread';
  } catch (error) {
    return `normal priority (${PRIORITY} refused: ${(error as Error).message.split('\n')[0]})`;
  }
}
