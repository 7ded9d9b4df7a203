/**
 * Private helpers of the proxy tests: a provider test server (scripted tool loop) with the
 * proxy in front of it, both on loopback, and a manager whose events are kept.
 */
import type { AnyCompactEvent } from '../../src/core/events/events.js';
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { CompactManagerOptions } from '../../src/core/manager/manager-options.js';
import type { ProxyLogEntry } from '../../src/proxy/index.js';
import { type RunningProxy, startProxy } from '../../src/proxy/index.js';
import {
  type ProviderHandler,
  type ProviderTestServer,
  startProviderTestServer,
} from '../../src/testing/provider-test-server.js';
import { WINDOW } from '../support/tool-loop.js';

/** A provider, the proxy in front of it, and what the proxy's manager emitted and logged. */
export interface ProxiedProvider {
  provider: ProviderTestServer;
  proxy: RunningProxy;
  manager: CompactManager;
  events: AnyCompactEvent[];
  logs: ProxyLogEntry[];
  close(): Promise<void>;
}

/** Starts a provider test server with `handler` and the proxy in front of it. */
export async function startProxiedProvider(
  handler: ProviderHandler,
  options: { manager?: CompactManagerOptions; maxBodyBytes?: number; provider?: ProviderTestServer } = {},
): Promise<ProxiedProvider> {
  const provider = options.provider ?? (await startProviderTestServer({ handler }));
  const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: WINDOW, ...options.manager });
  const events: AnyCompactEvent[] = [];
  manager.on('*', (event) => events.push(event as AnyCompactEvent));
  const logs: ProxyLogEntry[] = [];
  const proxy = await startProxy({
    upstream: provider.url,
    manager,
    port: 0,
    log: (entry) => logs.push(entry),
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
  });
  return {
    provider,
    proxy,
    manager,
    events,
    logs,
    close: async () => {
      await proxy.close({ graceMs: 1000 });
      await provider.close();
    },
  };
}
