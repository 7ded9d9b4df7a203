/**
 * One compacted route's request: parse the body, find the session, compact the conversation
 * with the manager, and give the body to forward. A request the manager cannot compact (bad
 * messages, a budget it cannot meet, a failing store past fail-open) is forwarded as the
 * client sent it: the upstream's answer to it is the client's to see.
 */

import { placeBreakpointsInSlices } from '../adapters/anthropic/cache-breakpoints.js';
import { clock } from '../core/clock.js';
import { isCompactError } from '../core/errors.js';
import type { CompactManager } from '../core/manager/compact-manager.js';
import type { CompactionResult } from '../core/manager/manager-options.js';
import { CHAT_TURNS, isSummaryText, summaryFirst } from '../core/messages/summary-first.js';
import { bodyReplyTokens } from '../core/preflight/body/reply-tokens.js';
import type { ParsedBodies, ParsedRequest } from './bodies/parsed-bodies.js';
import { spliceBodyInSlices } from './bodies/splice-body.js';
import type { ProxyLogEntry } from './proxy-options.js';
import type { ProxyRoute } from './proxy-routes.js';
import type { KnownConversations } from './sessions/known-conversations.js';
import { fingerprintInSlices, headerSession } from './sessions/session-of-request.js';

/** What to forward for one compacted request. */
export interface CompactedRequest {
  /** The body to send upstream (the client's own bytes when nothing changed). */
  body: Buffer;
  /** The session (also the key the usage is recorded under). */
  session: string | undefined;
  /** Whether the answer is streamed (the body's `stream: true`). */
  streamed: boolean;
  /** Fields for the log line. */
  log: Partial<ProxyLogEntry>;
}

type Json = Record<string, unknown>;

/**
 * Anthropic clients mark the newest message for the prompt cache, so a message's marks
 * change from one call to the next: without them the history is the same every call.
 * Returns the same array when no message carries a mark.
 */
function withoutMessageMarks(messages: readonly unknown[]): readonly unknown[] {
  let out: unknown[] | undefined;
  messages.forEach((message, i) => {
    const content = (message as Json | null)?.content;
    if (!Array.isArray(content) || !content.some((block) => (block as Json)?.cache_control !== undefined))
      return;
    out ??= [...messages];
    out[i] = {
      ...(message as Json),
      content: content.map((block) => {
        if ((block as Json)?.cache_control === undefined) return block;
        const { cache_control: _mark, ...rest } = block as Json;
        return rest;
      }),
    };
  });
  return out ?? messages;
}

/** Sessions whose last request's messages are remembered (oldest forgotten first). */
const REMEMBERED_SESSIONS = 256;

/**
 * Each session's last view, when it was the history itself. A client resends its history as
 * new objects every call; the manager keeps the objects it indexed first where the new ones are
 * the same (it adopts them), so its view holds those. A view made, position for position, of
 * this call's objects and of the last view's (which was the history) is the history itself:
 * the client's own bytes can be forwarded without writing the body again. A view with any
 * other object (a rewrite, a summary) is not, and forgets the last view.
 */
export class LastViews {
  readonly #bySession = new Map<string, readonly unknown[]>();

  get(session: string): readonly unknown[] | undefined {
    return this.#bySession.get(session);
  }

  set(session: string, view: readonly unknown[] | undefined): void {
    this.#bySession.delete(session);
    if (view === undefined) return;
    this.#bySession.set(session, view);
    if (this.#bySession.size > REMEMBERED_SESSIONS)
      this.#bySession.delete(this.#bySession.keys().next().value as string);
  }
}

/** True when `view` is `messages` position for position (this call's objects or the last view's). */
function isHistory(
  view: readonly unknown[],
  messages: readonly unknown[],
  last: readonly unknown[] | undefined,
) {
  if (view.length !== messages.length) return false;
  for (let i = 0; i < view.length; i++) if (view[i] !== messages[i] && view[i] !== last?.[i]) return false;
  return true;
}

/**
 * The request's session: the header's, else the fingerprint of its opening (taken from the body
 * it extends when it can), told apart from other conversations that open alike by `known`.
 */
async function sessionOf(
  route: ProxyRoute,
  parsed: ParsedRequest,
  messages: readonly unknown[],
  options: { header: string | undefined; signal: AbortSignal; known: KnownConversations },
) {
  const named = headerSession(options.header);
  if (named !== undefined) return { session: named, fingerprint: undefined };
  const from = parsed.from;
  const fingerprint =
    from?.fingerprint !== undefined && parsed.reused >= from.fingerprintSpan
      ? { id: from.fingerprint, span: from.fingerprintSpan }
      : await fingerprintInSlices(route.format, messages, options.signal);
  const session = await options.known.sessionOf(
    route.format,
    fingerprint.id,
    messages,
    options.signal,
    parsed.bytes.length,
  );
  return { session, fingerprint };
}

/**
 * The body to forward for `messages` (the manager's view), splicing the client's bytes where it
 * can; in slices of the loop (a 20 MB body's walk and copy held it over 20 ms at once).
 */
async function bodyFor(
  route: ProxyRoute,
  parsed: ParsedRequest,
  messages: readonly unknown[],
  breakpoints: boolean,
  signal: AbortSignal,
): Promise<Buffer> {
  let next = route.withMessages(parsed.body, messages);
  if (breakpoints) next = await placeBreakpointsInSlices(next, true);
  const spliced = await spliceBodyInSlices(parsed, route.messagesKey, next, undefined, signal);
  return spliced ?? Buffer.from(JSON.stringify(next));
}

/**
 * The messages to send: a Chat request opens with a user turn, the summary when a folded first
 * user message or a pinned tool round would open it with an assistant turn (Gemini's and
 * gateways' Chat endpoints to Anthropic models refuse that). An Anthropic request is assembled so.
 */
function sentMessages(route: ProxyRoute, result: CompactionResult): readonly unknown[] {
  if (route.format !== 'openai-chat' || result.summary === undefined) return result.messages;
  const text = result.summary.text;
  return summaryFirst(result.messages, (message) => isSummaryText(message, text), CHAT_TURNS);
}

/** Compacts one request's conversation (see the file's comment). */
export async function compactRequest(
  manager: CompactManager,
  route: ProxyRoute,
  parsed: ParsedRequest,
  options: {
    sessionHeader: string | undefined;
    signal: AbortSignal;
    cacheBreakpoints: boolean;
    lastViews: LastViews;
    bodies: ParsedBodies;
    known: KnownConversations;
  },
): Promise<CompactedRequest> {
  const { body, bytes } = parsed;
  const streamed = body.stream === true;
  const original = route.messagesOf(body);
  if (original === undefined || original.length === 0)
    return { body: bytes, session: undefined, streamed, log: {} };
  let mark = clock.now();
  const { session, fingerprint } = await sessionOf(route, parsed, original, {
    header: options.sessionHeader,
    signal: options.signal,
    known: options.known,
  });
  options.bodies.remember(session, parsed, route, fingerprint);
  const log: Partial<ProxyLogEntry> = {
    session,
    sessionFrom: options.sessionHeader === undefined ? 'fingerprint' : 'header',
    sessionMs: clock.now() - mark,
  };
  const anthropic = route.format === 'anthropic';
  const messages = anthropic ? withoutMessageMarks(original) : original;
  mark = clock.now();
  try {
    const result = await manager.compact(session, messages, {
      ...route.optionsOf(body),
      ...bodyReplyTokens(body),
      signal: options.signal,
    });
    Object.assign(log, {
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
      applied: result.applied,
      compactMs: clock.now() - mark,
    });
    mark = clock.now();
    // The view is the history itself (below the trigger, nothing compacted yet): the client's own bytes.
    const history = isHistory(result.messages, messages, options.lastViews.get(session));
    options.lastViews.set(session, history ? result.messages : undefined);
    const out = history
      ? bytes
      : await bodyFor(
          route,
          parsed,
          sentMessages(route, result),
          anthropic && options.cacheBreakpoints,
          options.signal,
        );
    log.serializeMs = clock.now() - mark;
    return { body: out, session, streamed, log };
  } catch (error) {
    if (!isCompactError(error) || options.signal.aborted) throw error;
    log.error = error.code;
    log.compactMs = clock.now() - mark;
    return { body: bytes, session, streamed, log };
  }
}
