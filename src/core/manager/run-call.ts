/**
 * One preflight call of a manager, in its session's queue: the quick answer of a fresh
 * process on a known session, else prepare (index, resume, count, decide), then either the
 * untriggered answer or the triggered compaction (its flight: lock, prepared summary, retry
 * on a store that moved) and its result.
 */
import type { BackgroundPreparations } from '../background/background-preparation.js';
import { type AgentCompactor, maybePrepare, runTriggeredOnce } from '../background/compaction-flight.js';
import type { UsageLedger } from '../counting/usage-ledger.js';
import { newOperation } from '../events/event-bus.js';
import type { MessageCodec } from '../messages/formats/message-codec.js';
import { type CompactPolicy, overridePolicy, reserveReply } from '../policy.js';
import {
  assembleUntriggered,
  declinedResult,
  untriggeredResult,
} from '../preflight/outcome/untriggered-result.js';
import type { PipelineDeps, PreparedRequest } from '../preflight/prepare-request.js';
import { prepareRequest } from '../preflight/prepare-request.js';
import { mayGoQuick, noteQuick, quickOrFull } from '../preflight/quick/quick-resume.js';
import { finishCompaction } from '../preflight/run-preflight.js';
import { throwIfAborted } from '../queues/call-queue.js';
import type { FailOpenStore } from '../store/fail-open-store.js';
import type { CompactionResult, CompactOptions } from './manager-options.js';

/** What a manager's calls run with (fixed at construction). */
export interface CallContext {
  readonly deps: PipelineDeps;
  readonly agents: ReadonlyMap<string, AgentCompactor>;
  readonly policy: Readonly<CompactPolicy>;
  readonly customStrategies: string[];
  readonly background: BackgroundPreparations | undefined;
  readonly lockTtlMs: number | undefined;
  readonly failOpen: FailOpenStore | undefined;
  readonly usage: UsageLedger;
  readonly maxContextTokens: number;
}

/** One call's arguments. */
export interface CallInput<M> {
  sessionId: string;
  key: string;
  messages: readonly M[];
  codec: MessageCodec;
  options: CompactOptions;
}

/** Runs one call (see the file comment); `attempt` counts reloads after the store moved. */
export async function runCall<M>(
  self: CallContext,
  call: CallInput<M>,
  attempt = 0,
): Promise<CompactionResult<M>> {
  const { sessionId, key, messages, codec, options } = call;
  throwIfAborted(options.signal);
  const agent = options.agent === undefined ? undefined : self.agents.get(options.agent);
  const deps = agent?.deps ?? self.deps;
  const maxContextTokens = options.maxContextTokens ?? self.maxContextTokens;
  const policy = reserveReply(
    overridePolicy(self.policy, [agent?.policy, options.policy], self.customStrategies),
    options.replyTokens,
    maxContextTokens,
  );
  const context = newOperation(sessionId, options);
  const input = { context, key, messages, codec, policy, options, maxContextTokens };
  // A fresh process's first call on a known session, from its quick record (issue 47); a warm
  // call skips it without an await.
  const tryQuick = !self.background && attempt === 0;
  if (mayGoQuick(deps, input, tryQuick)) {
    const quick = await quickOrFull<M, CompactOptions>(deps, input, tryQuick);
    if ('quick' in quick) return quick.quick;
    if (quick.options !== options)
      return runCall(self, { ...call, messages: quick.messages as M[], options: quick.options }, attempt);
  }
  const prepared: PreparedRequest = await prepareRequest(deps, input);
  if (!prepared.decision.triggered) {
    if (self.background) maybePrepare(self.background, deps, prepared);
    const assembling = assembleUntriggered(prepared);
    if (assembling) await assembling;
    const result = untriggeredResult<M>(deps, prepared);
    noteQuick(deps, prepared);
    return result;
  }
  // Held events (the decision first) are delivered even when the compaction fails.
  const flight = {
    store: deps.store,
    lockTtlMs: self.lockTtlMs,
    background: self.background,
    storeDown: () => self.failOpen?.down === true,
    retryStore: () => self.failOpen?.retryNow(),
  };
  const outcome = await runTriggeredOnce(flight, deps, prepared, attempt).catch((error: unknown) => {
    deps.bus.release(context);
    throw error;
  });
  if (outcome === 'declined') return declinedResult<M>(deps, prepared);
  if (outcome === 'retry') {
    deps.bus.release(context);
    // Bounded: after MAX_COMPACTION_RELOADS the flight answers locally instead of 'retry'.
    return runCall(self, { ...call, options: { ...options, force: false } }, attempt + 1);
  }
  if (!outcome.local) self.background?.compacted(key, outcome.state);
  const result = await finishCompaction<M>(deps, prepared, outcome);
  if (result.applied) self.usage.rewrite(sessionId);
  return result;
}
