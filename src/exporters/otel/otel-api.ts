import type { Tracer } from '@opentelemetry/api';
import { CompactError } from '../../core/errors.js';
import type { ExportPrivacyOptions } from '../event-utils.js';

/** The `@opentelemetry/api` module. */
export type OtelApi = typeof import('@opentelemetry/api');

/** The default tracer's name. */
export const TRACER_NAME = 'agent-compaction';

/** Options shared by {@link otelExporter} and {@link instrumentManager}. */
export interface OtelOptions extends ExportPrivacyOptions {
  /**
   * The tracer spans are created with.
   * @default api.trace.getTracer('agent-compaction')
   */
  tracer?: Tracer;
  /**
   * The `@opentelemetry/api` module (inject it when it cannot be imported, e.g. bundled).
   * @default await import('@opentelemetry/api')
   */
  api?: OtelApi;
}

/** The injected API module, else `@opentelemetry/api` imported lazily (a typed error when it is missing). */
export async function loadApi(injected: OtelApi | undefined): Promise<OtelApi> {
  if (injected) return injected;
  try {
    return await import('@opentelemetry/api');
  } catch (error) {
    throw new CompactError('missing_dependency', 'install @opentelemetry/api: npm i @opentelemetry/api', {
      cause: error,
    });
  }
}
