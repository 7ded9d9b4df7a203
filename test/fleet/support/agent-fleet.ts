/**
 * Agent processes of the fleet tests and the fault bench (fleet-agent.ts), stepping sessions
 * together, and the ledger of what they sent: every versioned summary text per session and
 * version across processes and Redis lifetimes (one text per version), and each session's
 * versions across responses (never down).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { ReportInbox } from '../../storage/support/report-inbox.js';
import type { FleetAgentCommand, FleetAgentReport } from './fleet-agent.js';

const AGENT = new URL('./fleet-agent.ts', import.meta.url).pathname;

type Result = Extract<FleetAgentReport, { type: 'result' }>;
type Failed = Extract<FleetAgentReport, { type: 'failed' }>;

/** Agent processes of one test. */
export class AgentFleet {
  readonly inbox = new ReportInbox<FleetAgentReport>();
  readonly children = new Map<string, ChildProcess>();
  readonly #env: Record<string, string>;
  #next = 0;

  constructor(env: Record<string, string>) {
    this.#env = env;
  }

  /** Starts agent `id`; resolves once it listens. */
  async start(id: string, env: Record<string, string> = {}): Promise<void> {
    const child = fork(AGENT, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ...this.#env, ...env, AGENT_ID: id },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (report: FleetAgentReport) => this.inbox.push(report));
    this.children.set(id, child);
    await this.inbox.until((r) => r.type === 'ready' && r.agent === id);
  }

  #ask<T extends FleetAgentReport>(
    agent: string,
    command: FleetAgentCommand,
    match: (r: FleetAgentReport) => r is T,
  ) {
    const child = this.children.get(agent);
    if (!child) throw new Error(`no agent ${agent}`);
    const answer = this.inbox.until(match);
    child.send(command);
    return answer;
  }

  /** One call of `session` with its first `messages` messages on agent `agent`. */
  compact(agent: string, session: string, messages: number): Promise<Result | Failed> {
    const id = this.#next++;
    return this.#ask(
      agent,
      { type: 'compact', id, session, messages },
      (r): r is Result | Failed => (r.type === 'result' || r.type === 'failed') && r.id === id,
    );
  }

  /** Whether agent `agent`'s store client answers now. */
  async probe(agent: string): Promise<boolean> {
    const id = this.#next++;
    const answer = await this.#ask(
      agent,
      { type: 'probe', id },
      (r): r is Extract<FleetAgentReport, { type: 'probe' }> => r.type === 'probe' && r.id === id,
    );
    return answer.answered;
  }

  /** Events of one code reported by the agents. */
  events(code: string): Extract<FleetAgentReport, { type: 'event' }>[] {
    return this.inbox.reports.filter(
      (r): r is Extract<FleetAgentReport, { type: 'event' }> => r.type === 'event' && r.code === code,
    );
  }

  /** Stops every agent (graceful: disconnect; SIGKILL after 10 s). */
  async stop(): Promise<void> {
    await Promise.all(
      [...this.children.values()].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
            if (child.connected) child.disconnect();
          }),
      ),
    );
    this.children.clear();
  }
}

/** One call's answer, as the ledger keeps it. */
export interface Sent {
  readonly session: string;
  readonly step: number;
  readonly agent: string;
  readonly result?: Result;
  readonly error?: string;
}

/** What every agent sent, and the checks of issue 46 over it. */
export class FleetLedger {
  readonly sent: Sent[] = [];

  /** Records one answer. */
  add(session: string, step: number, agent: string, answer: Result | Failed): void {
    this.sent.push(
      answer.type === 'result'
        ? { session, step, agent, result: answer }
        : { session, step, agent, error: answer.error },
    );
  }

  /** Calls that threw. */
  failures(): string[] {
    return this.sent
      .filter((s) => s.error !== undefined)
      .map((s) => `${s.session} step ${s.step}: ${s.error}`);
  }

  /** `session vN` that went out with more than one text (across processes and Redis lifetimes). */
  doubled(): string[] {
    const texts = new Map<string, Set<string>>();
    for (const { session, result } of this.sent)
      for (const summary of result?.sent ?? []) {
        const key = `${session} v${summary.version}`;
        const set = texts.get(key) ?? new Set<string>();
        set.add(summary.text);
        texts.set(key, set);
      }
    return [...texts].filter(([, set]) => set.size > 1).map(([key, set]) => `${key}: ${set.size} texts`);
  }

  /** Answers whose version (or a summary version they sent) is below one the session answered before. */
  down(): string[] {
    const highest = new Map<string, number>();
    const down: string[] = [];
    for (const { session, step, agent, result } of [...this.sent].sort((a, b) => a.step - b.step)) {
      if (!result) continue;
      const versions = [result.version, ...result.sent.map((s) => s.version)];
      const low = Math.min(...versions);
      const before = highest.get(session) ?? 0;
      if (low < before) down.push(`${session} step ${step} (agent ${agent}): v${low} after v${before}`);
      highest.set(session, Math.max(before, ...versions));
    }
    return down;
  }

  /**
   * What `session`'s answers carried, step by step (agent, version, summary versions sent,
   * compacted, local): printed with a failed check, so that a race shows its whole story.
   */
  story(session: string): string {
    return [...this.sent]
      .filter((s) => s.session === session)
      .sort((a, b) => a.step - b.step)
      .map(({ step, agent, result, error }) => {
        if (!result) return `${step} ${agent}: failed ${error}`;
        const sent = result.sent.map((s) => `v${s.version}`).join(',') || '-';
        const flags = [result.applied && 'compacted', result.local && 'local'].filter(Boolean).join(' ');
        return `${step} ${agent}: v${result.version} sent ${sent} ${flags}`.trimEnd();
      })
      .join('\n');
  }

  /** The highest version any answer carried. */
  highest(): number {
    return Math.max(0, ...this.sent.map((s) => s.result?.version ?? 0));
  }

  /** Figures of the bench: share of compactions from the queue, local answers, preflight times. */
  figures(): { compactions: number; fromQueue: number; local: number; p50: number; p99: number } {
    const results = this.sent.flatMap((s) => (s.result ? [s.result] : []));
    const compactions = results.filter((r) => r.applied && !r.local);
    const times = results.map((r) => r.preflightMs).sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
    return {
      compactions: compactions.length,
      fromQueue: compactions.filter((r) => r.fromQueue).length,
      local: results.filter((r) => r.applied && r.local).length,
      p50: at(0.5),
      p99: at(0.99),
    };
  }
}

/**
 * Steps `from..to` of every session together, each on agent `agentOf(session, step)`;
 * `during(step)` runs before each step and may end the range early by returning `false`.
 */
export async function driveFleet(
  fleet: AgentFleet,
  ledger: FleetLedger,
  sessions: readonly string[],
  range: { from: number; to: number },
  agentOf: (session: number, step: number) => string,
  during?: (step: number) => unknown,
): Promise<number> {
  let step = range.from;
  for (; step <= range.to; step++) {
    if ((await during?.(step)) === false) break;
    await Promise.all(
      sessions.map(async (session, s) => {
        const agent = agentOf(s, step);
        ledger.add(session, step, agent, await fleet.compact(agent, session, 2 * step));
      }),
    );
  }
  return step;
}
