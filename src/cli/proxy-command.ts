/**
 * `agent-compaction proxy --upstream URL [--port N] [--host H] [--config FILE]`: the
 * compacting proxy (`agent-compaction/proxy`) in front of one provider, built from the config
 * (session store, archive, summarizer, redaction, exporters) and the policy flags, running
 * until SIGINT or SIGTERM, then finishing the answers in flight.
 */
import { CompactError, isCompactError } from '../core/errors.js';
import { MIN_CONTEXT_TOKENS } from '../core/manager/manager-options.js';
import type { CliIo } from './cli-io.js';
import { type FlagOptions, parseCliArgs } from './parse-cli-args.js';
import { stopSignal } from './stop-signal.js';

/** Log errors that say an answer was cut (the client or the upstream went away), not why it went uncompacted. */
const CUT_ANSWERS = new Set(['client_closed', 'upstream_aborted']);

const PROXY_OPTIONS: FlagOptions = {
  upstream: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  config: { type: 'string' },
  model: { type: 'string' },
  'max-context': { type: 'string' },
  'max-body': { type: 'string' },
  quiet: { type: 'boolean' },
  json: { type: 'boolean' },
};

function integerFlag(raw: unknown, name: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(String(raw)) || value < min || value > max)
    throw new CompactError(
      'invalid_config',
      `--${name} must be an integer from ${min} to ${max} (got ${String(raw)})`,
      {
        issues: [{ path: [name], message: `must be an integer from ${min} to ${max}` }],
      },
    );
  return value;
}

/** Runs the proxy; resolves once it stopped after SIGINT or SIGTERM. */
export async function runProxyCommand(argv: readonly string[], io: CliIo): Promise<void> {
  const { values, positionals } = parseCliArgs(argv, PROXY_OPTIONS);
  if (positionals.length > 0)
    throw new CompactError('invalid_config', `unexpected argument: ${positionals[0]}`);
  if (typeof values.upstream !== 'string')
    throw new CompactError('invalid_config', 'proxy needs --upstream URL (the provider it forwards to)', {
      issues: [{ path: ['upstream'], message: 'is required' }],
    });
  const port = integerFlag(values.port, 'port', 0, 65535);
  const maxBodyBytes = integerFlag(values['max-body'], 'max-body', 1024, 2 ** 31);
  const { loadManagerOptions } = await import('./load-manager-options.js');
  const options = await loadManagerOptions(values.config as string | undefined, io.env);
  if (typeof values.model === 'string') options.model = values.model;
  const maxContext = integerFlag(values['max-context'], 'max-context', MIN_CONTEXT_TOKENS, 2 ** 31);
  if (maxContext !== undefined) options.maxContextTokens = maxContext;
  const { CompactManager } = await import('../core/manager/compact-manager.js');
  const manager = new CompactManager(options);
  // Loaded here, not at start: its peers (hono) name themselves when missing (`missing_dependency`).
  const { startProxy } = await import('../proxy/index.js');
  const json = values.json === true;
  const proxy = await namingUpstreamFlag(startProxy)({
    upstream: values.upstream,
    manager,
    ...(port === undefined ? {} : { port }),
    ...(typeof values.host === 'string' ? { host: values.host } : {}),
    ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    // One line per request: never a header, never a message.
    ...(values.quiet
      ? {}
      : {
          log: (entry) =>
            io.stderr(
              json
                ? `${JSON.stringify(entry)}\n`
                : `${entry.method} ${entry.path} ${entry.status}${entry.session ? ` session=${entry.session}` : ''}${
                    entry.tokensBefore === undefined
                      ? ''
                      : ` ${entry.tokensBefore}->${entry.tokensAfter} tokens${entry.applied ? ' (compacted)' : ''}`
                  }${entry.error === undefined ? '' : CUT_ANSWERS.has(entry.error) ? ` ${entry.error}` : ` forwarded uncompacted (${entry.error})`}\n`,
            ),
        }),
  });
  await manager.ready();
  (await import('./respawn-with-heap-flags.js')).stopWithParent();
  const stopped = stopSignal(); // before saying it listens (see stopSignal)
  io.stdout(
    `${json ? JSON.stringify({ url: proxy.url, port: proxy.port }) : `proxy listening on ${proxy.url}`}\n`,
  );
  await stopped;
  io.stderr(`proxy stopping: finishing ${proxy.inFlight} answer(s) in flight\n`);
  await proxy.close();
  await manager.shutdown();
  await (options.store as { close?: () => Promise<void> } | undefined)?.close?.();
}

/** `start`, whose error about the `upstream` option names the flag that set it (`--upstream is not a URL`). */
function namingUpstreamFlag<A extends unknown[], R>(start: (...args: A) => Promise<R>) {
  return async (...args: A): Promise<R> => {
    try {
      return await start(...args);
    } catch (error) {
      const issue = (error as CompactError).issues?.[0];
      if (!isCompactError(error, 'invalid_config') || issue?.path[0] !== 'upstream') throw error;
      throw new CompactError('invalid_config', `--upstream ${issue.message}`, {
        cause: error,
        issues: error.issues ?? [],
      });
    }
  };
}
