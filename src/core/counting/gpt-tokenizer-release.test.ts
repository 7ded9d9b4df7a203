import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CompactManager } from '../manager/compact-manager.js';
import { gptTokenizerFile } from './gpt-tokenizer-file.js';
import { tokenCounterFor } from './token-counter.js';

const require = createRequire(import.meta.url);
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const TEXT = 'Refactor src/auth/token.ts: rotate keys every 15 minutes — ✓ déjà vu 東京 🚀 1234567';

/**
 * Issue 47 point 4: the gpt-tokenizer modules a manager's tokenizer loaded leave Node's module
 * cache when the last manager shuts down (a fresh process that imported the library holds
 * none), one loaded by someone else before stays, and counts after are the same.
 */
describe("gpt-tokenizer's modules at the last shutdown", () => {
  it('leave the module cache unless loaded elsewhere first, and count the same after', async () => {
    // Loaded by the caller before any manager: not this library's to drop.
    const theirs = require('gpt-tokenizer/utfUtil');
    const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    await manager.ready();
    const before = tokenCounterFor('gpt-4o').countText(TEXT);
    const ours = gptTokenizerFile('GptEncoding');
    expect(require.cache[ours]).toBeDefined();
    await manager.shutdown();
    expect(require.cache[ours]).toBeUndefined();
    expect(require.cache[gptTokenizerFile('BytePairEncodingCore')]).toBeUndefined();
    expect(require('gpt-tokenizer/utfUtil')).toBe(theirs);

    // The released encoding is held weakly: once collected, the next manager loads it anew.
    await new Promise((resolve) => setTimeout(resolve, 0));
    for (let i = 0; i < 4; i++) gc();
    const again = new CompactManager({ model: 'gpt-4o', maxContextTokens: 16_000 });
    await again.ready();
    expect(require.cache[ours]).toBeDefined();
    expect(tokenCounterFor('gpt-4o').countText(TEXT)).toBe(before);
    await again.shutdown();
  });
});
