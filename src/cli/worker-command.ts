/**
 * `agent-compaction worker --config FILE`: a worker of the summary preparation queue
 * (`agent-compaction/queue`) built from the config (its queue, session store, summarizer,
 * redaction and exporters), running until SIGINT or SIGTERM.
 */

import { CompactError } from '../core/errors.js';
import type { CliIo } from './cli-io.js';
import { stopSignal } from './stop-signal.js';

/** Runs the worker; resolves once it stopped after SIGINT or SIGTERM. */
export async function runWorkerCommand(flag: string | undefined, json: boolean, io: CliIo): Promise<void> {
  const { configFileFor } = await import('./find-config-file.js');
  const file = configFileFor(flag, io.env, io.cwd ?? process.cwd());
  if (file === undefined)
    throw new CompactError(
      'invalid_config',
      'worker needs a config file with a queue section (--config FILE)',
      {
        issues: [{ path: ['config'], message: 'is required' }],
      },
    );
  const { earlyProbe, earlyRedisUrl } = await import('./early-probe.js');
  const cwd = io.cwd ?? process.cwd();
  // Redis is tried before the config, the store, the summarizer and bullmq are loaded when its
  // URL is known without them, else as soon as the config names it.
  const known = await earlyRedisUrl(file, io.env, cwd);
  let early = known === undefined ? undefined : earlyProbe(known, io);
  const config = await import('../config/index.js');
  const { queueUrl } = await import('../config/queue-options.js');
  const loaded = await config.loadConfig({ file, env: io.env, cwd });
  const url = queueUrl(loaded, io.env);
  if (early?.url !== url) early = earlyProbe(url, io);
  const probe = early;
  const options = await config.toManagerOptions(loaded, { env: io.env });
  const queue = loaded.queue!;
  const { startProbedWorker } = await import('../queue/preparation-worker.js');
  const worker = await startProbedWorker(
    {
      connection: url,
      // queueUrl checked that sessions.store is redis: toManagerOptions built that store.
      store: options.store!,
      ...(options.summarizer ? { summarizer: options.summarizer } : {}),
      name: queue.name,
      concurrency: queue.concurrency,
      ...(queue.rate_limit
        ? { rateLimit: { max: queue.rate_limit.max, durationMs: queue.rate_limit.duration_ms } }
        : {}),
      timeoutMs: options.summarizerTimeoutMs,
      model: options.model,
      redaction: options.redaction === true ? {} : options.redaction,
      exporters: options.exporters,
      onConnectionError: (message) => {
        // The worker tells the same probe's answer (as an event too): said once, by the probe.
        if (!probe.said(message)) io.stderr(`${message}\n`);
      },
      onJobDone: (outcome) =>
        io.stdout(
          json
            ? `${JSON.stringify(outcome)}\n`
            : `${outcome.jobId} attempt ${outcome.attempt}: ${outcome.result}${outcome.error ? ` (${outcome.error})` : ''}\n`,
        ),
    },
    probe.probe,
  );
  const stopped = stopSignal(); // before saying it listens (see stopSignal)
  io.stderr(`worker listening on queue ${queue.name} (concurrency ${queue.concurrency})\n`);
  await stopped;
  io.stderr('worker stopping: finishing the jobs running\n');
  await worker.close();
  await (options.store as { close?: () => Promise<void> } | undefined)?.close?.();
}
