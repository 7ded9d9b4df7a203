import { CompactError, isCompactError } from '../core/errors.js';

/**
 * Turns anything a provider client threw into a typed error: `CompactError`s pass through,
 * anything else becomes `summarizer_failed` with the original as `cause` (the resilient
 * wrapper turns an abort by its own timeout into `summarizer_timeout`).
 */
export function toSummarizerError(name: string, error: unknown): CompactError {
  if (isCompactError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const status =
    typeof error === 'object' && error !== null ? (error as { status?: unknown }).status : undefined;
  const prefix = typeof status === 'number' ? `${name}: HTTP ${status}` : name;
  return new CompactError('summarizer_failed', `${prefix}: ${message}`, { cause: error });
}

/** Imports an optional peer, or throws `missing_dependency` with the install command. */
export async function importPeer<T>(specifier: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw new CompactError('missing_dependency', `install ${specifier}: npm i ${specifier}`, {
      cause: error,
    });
  }
}

/** Options shared by the SDK clients a summarizer builds for itself. */
export interface SdkClientOptions {
  maxRetries: number;
  timeout: number;
  apiKey?: string | undefined;
  baseURL?: string | undefined;
}

/**
 * A memoized client getter: the injected client, or one built on first use from the lazily
 * imported peer SDK (whose default export is the client class).
 */
export function lazySdkClient<C>(
  specifier: string,
  load: () => Promise<{ default: new (options: Record<string, unknown>) => C }>,
  injected: C | undefined,
  options: SdkClientOptions,
): () => Promise<C> {
  let client: Promise<C> | undefined;
  return () => {
    client ??= injected
      ? Promise.resolve(injected)
      : importPeer(specifier, load)
          .catch((error: unknown) => {
            // Not memoized: installing the peer later (or a transient failure) can recover.
            client = undefined;
            throw error;
          })
          .then(
            (module) =>
              new module.default({
                maxRetries: options.maxRetries,
                timeout: options.timeout,
                ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
                ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
              }),
          );
    return client;
  };
}
