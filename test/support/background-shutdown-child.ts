/**
 * Child process of the shutdown test: starts a background preparation whose summarizer would
 * take a minute (it honours its abort signal, as the LLM summarizers do), shuts the manager
 * down and prints the status. It never calls `process.exit`: the test checks that the
 * process ends by itself, i.e. that nothing is left keeping it alive.
 *
 * Modes (argv[2]): `running` (the summarizer is waiting), `pending` (shutdown before the
 * deferred start), `waiting` (a triggered preflight waits on the preparation and is aborted).
 */
import { CompactManager } from '../../src/core/manager/compact-manager.js';
import type { SummarizeRequest, SummarizeResult, Summarizer } from '../../src/core/summary/summarizer.js';
import { charCounter, chatTurns, nextTurn } from './background-fixtures.js';

const calls: string[] = [];
const summarizer: Summarizer = {
  name: 'slow-llm',
  summarize: (request: SummarizeRequest) =>
    new Promise<SummarizeResult>((resolve, reject) => {
      calls.push('start');
      const timer = setTimeout(() => resolve({ text: 'late summary' }), 60_000);
      request.signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          calls.push('aborted');
          reject(request.signal?.reason);
        },
        { once: true },
      );
    }),
};

const mode = process.argv[2] ?? 'running';
const manager = new CompactManager({
  maxContextTokens: 10_000,
  tokenCounter: charCounter,
  summarizer,
  summarizerTimeoutMs: 120_000,
  background: true,
  policy: { hardCapBuffer: 500 },
});
const history = chatTurns(50);
await manager.preflight('s', history.slice(0, 72));
let waiterError = '';
// The preparation redacts its input in slices before it calls the summarizer: wait for the call.
if (mode !== 'pending') while (!calls.includes('start')) await nextTurn();
if (mode === 'waiting') {
  const controller = new AbortController();
  const waiting = manager.preflight('s', history.slice(0, 90), { signal: controller.signal });
  await nextTurn();
  controller.abort(new Error('stop'));
  waiterError = await waiting.then(
    () => 'none',
    (error: { code?: string }) => String(error.code),
  );
}
const before = manager.backgroundStatus();
await manager.shutdown();
process.stdout.write(JSON.stringify({ mode, before, after: manager.backgroundStatus(), calls, waiterError }));
