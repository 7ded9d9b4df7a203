/** The figures `bench/proxy.ts` measures and `bench/proxy-print.ts` prints. */

/** A p50, a p95 and a p99 (milliseconds). */
export interface Spread {
  p50: number;
  p95: number;
  p99: number;
}

/** The figures of one history size. */
export interface ProxySizeFigures {
  /** How the bench's processes were scheduled during the pairs (`PROXY_BENCH_PRIORITY`). */
  scheduling: string;
  historyTokens: number;
  messages: number;
  bodyBytes: number;
  calls: number;
  /** CPU milliseconds of the proxy's process per request (user and system; after the warm-up). */
  cpu: number;
  direct: Spread;
  /** Through the proxy less straight, pair by pair. */
  added: Spread;
  /** Through a bare store-and-forward relay less straight: what any hop needing the whole body adds. */
  relayAdded: Spread;
  /** The calls' own times through the proxy and through the relay (to set against `direct` quantile by quantile). */
  through: Spread;
  relayed: Spread;
  /** Through the proxy less through the relay: what the proxy's own work adds over such a hop. */
  overRelay: Spread;
  /** `added` by leg (through less straight): to the upstream's first byte in, its reading, its last byte in to the answer's end at the client; the client's write. */
  addedParts: {
    toUpstream: Spread;
    upstreamRead: Spread;
    back: Spread;
    written: Spread;
    toHandler: Spread;
    proxyToUpstream: Spread;
    directToUpstream: Spread;
  };
  /** Messages taken from the last body instead of parsed (median). */
  reused: number;
  /** The proxy's own timings (its log lines). */
  forward: Spread;
  /** CPU time of the proxy's process within `forward` (all its threads: GC helpers included). */
  forwardCpu: Spread;
  /** The same over the calls the manager did not compact (`applied` false). */
  forwardCpuNoCompaction: Spread;
  /** The same over the calls neither compacted nor with a main-thread GC pause in `forward`. */
  forwardCpuQuiet: Spread;
  /** Calls the manager compacted (of `calls` and `streamCalls`). */
  compactions: number;
  /** Calls with a main-thread GC pause in `forward`, and those pauses' total (p50, p99 over them). */
  gcCalls: number;
  gcMs: Spread;
  /** The calls of the highest `forwardCpuMs` (over p99), with where their time went. */
  slowest: SlowCall[];
  parse: Spread;
  compact: Spread;
  back: Spread;
  /** From the request's handler to its last byte read (the body copied in as it arrives). */
  read: Spread;
  streamCalls: number;
  firstByteDirect?: Spread;
  firstByteAdded?: Spread;
  /** The same through the bare relay (which holds nothing back either). */
  firstByteRelayAdded?: Spread;
  /** Stream pairs whose first byte through the proxy came before the upstream's rest would have. */
  firstBeforeRest?: number;
  /** `JSON.parse` of the body decoded from bytes, in the proxy's process (the largest size only). */
  floor?: Spread;
  /** Conversations new to the proxy (the largest size only): calls, added per pair, forward CPU, parse, compact. */
  fresh?: { calls: number; added: Spread; forwardCpu: Spread; parse: Spread; compact: Spread };
}

/** One call of the highest CPU in `forward`, by part (milliseconds). */
export interface SlowCall {
  cpu: number;
  wall: number;
  parse: number;
  compact: number;
  gcPause: number;
  /** Messages taken from the last body (0: the whole body parsed). */
  reused: number;
  compacted: boolean;
}

/** The proxy's figures. */
export interface ProxyBenchFigures {
  /** The load average before and after the run. */
  load: number[];
  loadAfter: number[];
  sizes: ProxySizeFigures[];
}
