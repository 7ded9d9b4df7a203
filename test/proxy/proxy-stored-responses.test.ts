/**
 * A Responses request that continues a response or a conversation the provider stored
 * (`previous_response_id`, `conversation`) sends only its new items: the proxy does not see the
 * conversation, so it forwards the request as sent, in no session.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SESSION_HEADER } from '../../src/proxy/index.js';
import { type ProxiedProvider, startProxiedProvider } from './proxy-fixture.js';

let running: ProxiedProvider | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** New items that alone are over the proxy's 8,000-token window (so a full history would be compacted). */
const newItems = Array.from({ length: 12 }, (_, i) => ({
  role: 'user',
  content: `note ${i}: ${Array.from({ length: 700 }, (_, k) => `word${(k * 7 + i) % 97}`).join(' ')}`,
}));

describe('Responses continuing a stored response', () => {
  it('is forwarded as sent, in no session', async () => {
    running = await startProxiedProvider(() => ({ text: 'ok' }));
    const { proxy, provider, manager } = running;
    for (const link of [{ previous_response_id: 'resp_1' }, { conversation: 'conv_1' }]) {
      const body = JSON.stringify({ model: 'gpt-4o', ...link, input: newItems });
      const response = await fetch(`${proxy.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await response.text();
      expect(response.status).toBe(200);
      expect(provider.requests.at(-1)?.rawBody === body).toBe(true);
      expect(response.headers.get(SESSION_HEADER)).toBeNull();
    }
    expect(manager.cacheStatus().sessions).toBe(0);
  });
});
