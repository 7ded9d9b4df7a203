/**
 * Private helpers of the SDK adapter tests: a scripted model that drives a long tool loop with
 * the same call id every step (`call_0`, as providers that number calls per response do), and
 * the checks every recorded request must pass.
 */
import type { CompactManager } from '../../src/core/manager/compact-manager.js';
import { readRequest, requestTokens } from '../../src/testing/agent-model-script.js';
import type {
  ProviderHandler,
  ProviderReply,
  ProviderTestServer,
  RecordedRequest,
} from '../../src/testing/provider-test-server.js';
import { scaled } from './test-scale.js';

/** The window every loop test runs in. */
export const WINDOW = 8000;
/**
 * Steps (model calls with a tool call) of one loop: 40 under `test:full`, 28 with longer tool
 * outputs under `npm test` (the raw loop is over three windows either way).
 */
export const STEPS = scaled(40, 28);
/** Lines of one tool output (about 25 tokens each). */
const OUTPUT_LINES = scaled(24, 36);
/**
 * Input tokens the provider test server reports for a request: about 4 characters of the JSON
 * body per token, a different count from the manager's (calibration must cope).
 */
export function reportedInput(request: RecordedRequest): number {
  return Math.max(1, Math.ceil(request.rawBody.length / 4));
}

/**
 * An OpenAI-style `context_length_exceeded` rejection (HTTP 400) of a request of `tokens`, the
 * model's window being `limit`: what the adapters' overflow recovery reads the limit from.
 */
export function contextLengthExceeded(limit: number, tokens: number): ProviderReply {
  return {
    status: 400,
    json: {
      error: {
        message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
  };
}

/** A tool output of about 600 tokens (900 under `npm test`), distinct per step. */
export function toolOutput(step: number): string {
  return Array.from(
    { length: OUTPUT_LINES },
    (_, line) => `step ${step} line ${line}: status=ok latency=${(step * 31 + line) % 97}ms host=web-${line}`,
  ).join('\n');
}

/** Options of {@link reusedIdLoop}. */
export interface ReusedIdLoopOptions {
  tool: string;
  /** Tool calls per user message. @default STEPS */
  steps?: number;
  /**
   * The call id of step `step` of request `seq`. @default always `call_0`. (The Agents SDK
   * deduplicates items by call id, so its tests use unique ids.)
   */
  idFor?: (step: number, seq: number) => string;
  /** Replies to send instead of the script for requests whose 1-based seq is a key. */
  override?: (request: RecordedRequest) => ProviderReply | undefined;
}

/**
 * A handler that, for each user message, calls `tool` `steps` times in sequence, always with id
 * `call_0`, then answers `Done`. Counts per user text (the visible history may be compacted)
 * and reports the server's default usage ({@link reportedInput}).
 */
export function reusedIdLoop(options: ReusedIdLoopOptions): ProviderHandler {
  const steps = options.steps ?? STEPS;
  const made = new Map<string, number>();
  let lastTurn = '';
  return (request) => {
    const overridden = options.override?.(request);
    if (overridden) return overridden;
    const view = readRequest(request);
    // The turn's user message may have been folded into the summary: then it is the last turn seen.
    const userText =
      view.entries.findLast((entry) => entry.kind === 'user' && !entry.text.includes('<COMPACT-SUMMARY'))
        ?.text ?? lastTurn;
    lastTurn = userText;
    const done = made.get(userText) ?? 0;
    if (done < steps) {
      made.set(userText, done + 1);
      const id = options.idFor?.(done, request.seq) ?? 'call_0';
      return { toolCalls: [{ id, name: options.tool, arguments: { step: done } }] };
    }
    return { text: `Done after ${done} steps.` };
  };
}

/**
 * Tool-pair problems of a request, matched by position (a result answers the nearest earlier
 * unanswered call with its id), so reused ids are checked for real.
 */
export function positionalPairProblems(request: RecordedRequest): string[] {
  const problems: string[] = [];
  const open = new Map<string, number>();
  for (const entry of readRequest(request).entries) {
    if (entry.kind === 'tool_call') open.set(entry.callId!, (open.get(entry.callId!) ?? 0) + 1);
    if (entry.kind === 'tool_result') {
      const count = open.get(entry.callId!) ?? 0;
      if (count === 0) problems.push(`result ${entry.callId} without an open call`);
      else open.set(entry.callId!, count - 1);
    }
  }
  for (const [id, count] of open) if (count > 0) problems.push(`${count} call(s) ${id} without a result`);
  return problems;
}

/** How many summary messages a request carries. */
export function summaryCount(request: RecordedRequest): number {
  return request.rawBody.split('<COMPACT-SUMMARY v').length - 1;
}

/** How a request's size is judged: the manager's own count, or what the provider reported. */
export type RequestMeasure = 'manager' | 'reported';

/**
 * One line per recorded request that breaks a rule: over the window, two summaries, broken
 * pairs. Size is the manager's count (exact for OpenAI models) or, for models the manager only
 * estimates, what the provider reported (the figure the provider rejects on).
 */
export function requestViolations(
  server: ProviderTestServer,
  manager: CompactManager,
  measure: RequestMeasure = 'manager',
): string[] {
  return server.requests.flatMap((request) => {
    const tokens =
      measure === 'reported' ? reportedInput(request) : requestTokens(manager, readRequest(request));
    const problems = positionalPairProblems(request);
    const out: string[] = [];
    if (tokens > manager.maxContextTokens) out.push(`#${request.seq}: ${tokens} tokens`);
    if (summaryCount(request) > 1) out.push(`#${request.seq}: ${summaryCount(request)} summaries`);
    if (problems.length > 0) out.push(`#${request.seq}: ${problems.join('; ')}`);
    return out;
  });
}
