/**
 * `agent-compaction/proxy`: an HTTP proxy in front of a provider that compacts every request
 * with a `CompactManager`, for clients that only take a base URL (any language, agent CLIs).
 * Needs `hono` and `@hono/node-server` (optional peers). See docs/proxy.md.
 */

export { DEFAULT_REUSE_BYTES } from './bodies/parsed-bodies.js';
export { createProxyApp } from './create-proxy-app.js';
export { handleExpectContinue } from './expect-continue.js';
export {
  type CompactionProxyOptions,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_PROXY_HOST,
  DEFAULT_PROXY_PORT,
  DEFAULT_SHUTDOWN_GRACE_MS,
  type ProxyLogEntry,
} from './proxy-options.js';
export { fingerprintSession, SESSION_HEADER } from './sessions/session-of-request.js';
export { type RunningProxy, type StartProxyOptions, startProxy } from './start-proxy.js';
