import type { CompactManager } from '../core/manager/compact-manager.js';
import type { ReportedUsage } from '../core/manager/manager-options.js';

/** The largest request body the proxy reads (a larger one is answered 413). */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;
/** The address the proxy binds when none is given: this machine only. */
export const DEFAULT_PROXY_HOST = '127.0.0.1';
/** The port the proxy listens on when none is given. */
export const DEFAULT_PROXY_PORT = 8787;
/** How long a shutdown waits for answers in flight before dropping them. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;

/** What the proxy did with one request, for a log line. Never carries a header or a message. */
export interface ProxyLogEntry {
  method: string;
  /** The path called, as sent (percent-encoded, no query string), a key in it redacted. */
  path: string;
  /**
   * The upstream's status, or the proxy's own (400, 404, 413, 502), or 499 when the client went
   * away before the answer's first byte (`error: 'client_closed'`; the upstream's call, if made,
   * was aborted).
   */
  status: number;
  /** The session the request was compacted in (compacted routes only). */
  session?: string;
  /** Whether the session came from the header or from the history's fingerprint. */
  sessionFrom?: 'header' | 'fingerprint';
  /** Tokens of the request before and after compaction. */
  tokensBefore?: number;
  tokensAfter?: number;
  /** True when the request was compacted (a summary or a pruning changed it). */
  applied?: boolean;
  /** Milliseconds reading the request body off the connection (from the handler's start). */
  readMs?: number;
  /** Milliseconds parsing it (only what is new, when it extends the session's last body). */
  parseMs?: number;
  /** Messages taken from the session's last body instead of parsed. */
  reused?: number;
  /** Milliseconds finding the session. */
  sessionMs?: number;
  /** Milliseconds spent compacting. */
  compactMs?: number;
  /** Milliseconds writing the body to forward (0 when the client's own bytes go). */
  serializeMs?: number;
  /**
   * Milliseconds of the proxy's own work before the upstream call: parsing the body, finding
   * the session, compacting, writing the body to forward (reading the request not included).
   */
  prepareMs?: number;
  /** Milliseconds from calling the upstream to its answer's head (the upstream's own time included). */
  upstreamMs?: number;
  /**
   * Milliseconds from the request's last byte received to its first byte written to the
   * upstream's connection: all the proxy adds on the way there.
   */
  forwardMs?: number;
  /**
   * CPU milliseconds the proxy's process used in `forwardMs` (all its threads): below
   * `forwardMs` when it waited for a core, the time it would take on a core of its own.
   */
  forwardCpuMs?: number;
  /**
   * Milliseconds from the upstream's answer head received to the answer's first byte written
   * to the client: all the proxy adds on the way back (served by `startProxy` only).
   */
  returnMs?: number;
  /**
   * Milliseconds from the handler's start to the answer's end: its body all read from the
   * upstream and handed on to the client (a stream's last event), or cut (answers passed back
   * from the upstream only).
   */
  totalMs?: number;
  /** The usage the upstream's answer reported (a compacted route's 2xx answer in a session). */
  usage?: Partial<ReportedUsage>;
  /**
   * Why the request was forwarded uncompacted, when it was: the `CompactError` code, or
   * `encoded_body` for a body in a coding the proxy cannot decode (`Content-Encoding: zstd` on
   * Node 20), which is forwarded as sent; or
   * `client_closed` (status 499) when the client went away before its answer; with the upstream's
   * status, `client_closed` when the client went away mid-answer and `upstream_aborted` when
   * the upstream's answer was cut.
   */
  error?: string;
}

/** Options of {@link createProxyApp}. */
export interface CompactionProxyOptions {
  /**
   * The provider the proxy forwards to: an origin with an optional base path, as the
   * provider's SDK takes it (`https://api.anthropic.com`, `https://api.openai.com/v1`,
   * `https://generativelanguage.googleapis.com/v1beta/openai`): a base path takes the request's
   * path without its `/v1`, except for Anthropic's requests. Fixed here: no request can
   * change it.
   */
  upstream: string | URL;
  /** The manager that compacts every request (its store shares sessions between instances). */
  manager: CompactManager;
  /** The largest request body read, in bytes. @default DEFAULT_MAX_BODY_BYTES (32 MiB) */
  maxBodyBytes?: number;
  /**
   * Anthropic prompt-cache breakpoints on a compacted request: the client's marks on messages
   * are dropped (they move every turn and would split the session) and the proxy places its own
   * beside the client's system and tool marks (`true`), or none (`false`).
   * @default true
   */
  cacheBreakpoints?: boolean;
  /**
   * Bytes of client requests kept (each conversation's last body), so that the next request,
   * which resends the history, is parsed only where it is new. 0 keeps none: every body is
   * parsed whole.
   * @default DEFAULT_REUSE_BYTES (64 MiB)
   */
  reuseBytes?: number;
  /**
   * A large body (64 KiB and more) is written to the upstream as it arrives, its last bytes
   * held until the proxy has decided; when it compacts, that call is closed with the body
   * incomplete and the compacted body sent on another connection (see docs/proxy.md). `false`
   * reads every body whole before calling the upstream.
   * @default true
   */
  forwardEarly?: boolean;
  /**
   * Milliseconds a kept connection to the upstream may stay idle before the proxy closes it
   * (sooner when the upstream announces a shorter `Keep-Alive: timeout`). An upstream that
   * closes idle connections sooner than it says makes a POST on a just-closed connection
   * fail with 502 `upstream_connection_reset`; shorten it for such an upstream.
   * @default UPSTREAM_IDLE_MS (4,000)
   */
  upstreamIdleMs?: number;
  /**
   * Called once per request, once its answer ended (a stream's last event handed on, or the
   * answer cut), or once the client went away before it (status 499).
   */
  log?: (entry: ProxyLogEntry) => void;
}
