/**
 * The proxy on a Node HTTP server (`@hono/node-server`), bound to 127.0.0.1 unless told
 * otherwise, with a shutdown that stops taking requests and lets the answers in flight
 * (streams included) finish before it closes.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeUpstream, createProxyApp } from './create-proxy-app.js';
import { handleExpectContinue } from './expect-continue.js';
import { loadNodeServer } from './load-peers.js';
import {
  type CompactionProxyOptions,
  DEFAULT_PROXY_HOST,
  DEFAULT_PROXY_PORT,
  DEFAULT_SHUTDOWN_GRACE_MS,
} from './proxy-options.js';

/** Options of {@link startProxy}. */
export interface StartProxyOptions extends CompactionProxyOptions {
  /** The port (0: a free one). @default DEFAULT_PROXY_PORT (8787) */
  port?: number;
  /** The address bound. @default DEFAULT_PROXY_HOST ('127.0.0.1': this machine only) */
  host?: string;
}

/** A running proxy. */
export interface RunningProxy {
  /** `http://host:port`: the base URL clients use (Anthropic SDKs), `${url}/v1` for OpenAI's. */
  readonly url: string;
  readonly port: number;
  /** Requests being answered right now. */
  readonly inFlight: number;
  /**
   * Stops taking requests, waits for the answers in flight (up to `graceMs`, then drops them)
   * and flushes the manager's exporters. The manager and its store stay open.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Starts the proxy and resolves once it listens.
 *
 * @example
 * ```ts
 * const proxy = await startProxy({ upstream: 'https://api.openai.com', manager, port: 8787 });
 * // clients: base URL `${proxy.url}/v1`; later: await proxy.close();
 * ```
 */
export async function startProxy(options: StartProxyOptions): Promise<RunningProxy> {
  const { createAdaptorServer } = await loadNodeServer();
  const app = createProxyApp(options);
  // Hono builds its router on the first match: here, not in the first request's turn (no route
  // is added to this app later).
  app.router.match('GET', '/healthz');
  // An HTTP/1.0 request may omit Host (RFC 9112 3.2: only HTTP/1.1 must send it, and Node's
  // server answers an HTTP/1.1 one without it 400 itself); the adapter would refuse it too.
  // The proxy routes by path alone, so the request's URL takes a placeholder host.
  const server = createAdaptorServer({ fetch: app.fetch, hostname: 'localhost' }) as Server;
  handleExpectContinue(server, app);
  let inFlight = 0;
  let closing = false;
  let drained: (() => void) | undefined;
  server.on('request', (_request, response) => {
    inFlight++;
    response.once('close', () => {
      inFlight--;
      if (!closing) return;
      server.closeIdleConnections();
      if (inFlight === 0) drained?.();
    });
  });
  const host = options.host ?? DEFAULT_PROXY_HOST;
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(options.port ?? DEFAULT_PROXY_PORT, host, () => {
      server.off('error', failed);
      listening();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    get inFlight() {
      return inFlight;
    },
    async close({ graceMs = DEFAULT_SHUTDOWN_GRACE_MS } = {}) {
      closing = true;
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((done) => {
          drained = done;
          timer = setTimeout(done, graceMs);
          timer.unref();
        });
        clearTimeout(timer);
      }
      server.closeAllConnections();
      await closed;
      closeUpstream(app);
      await options.manager.flush();
    },
  };
}
