/**
 * A child agent process for the lifecycle test: a manager built from a config object with
 * `sessions.store: redis` (the store is the config's, the caller has no handle on it), one
 * compaction, then `manager.shutdown()`. It prints `shut down` and must then exit by itself.
 */

import { resolveConfig, toManagerOptions } from '../../../src/config/index.js';
import { CompactManager } from '../../../src/core/manager/compact-manager.js';

const env = { ...process.env };
const config = resolveConfig({ sessions: { store: 'redis' } }, { env });
const options = await toManagerOptions(config, { env });
const manager = new CompactManager({ ...options, maxContextTokens: 2_000 });
const messages = Array.from({ length: 40 }, (_, k) => ({
  role: k % 2 === 0 ? 'user' : 'assistant',
  content: `message ${k} `.padEnd(200, 'x'),
}));
const result = await manager.manualCompact('exit-session', messages);
await manager.shutdown();
process.stdout.write(`shut down v${result.version}\n`);
