import { CompactError } from '../../core/errors.js';
import type { EventExporter } from '../../core/events/events.js';
import { type OtelExporterOptions, otelExporter } from './otel-exporter.js';

/** Options of {@link otlpExporter}. */
export interface OtlpExporterOptions extends Omit<OtelExporterOptions, 'tracer'> {
  /**
   * The OTLP/HTTP (JSON) traces endpoint.
   * @default OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else 'http://localhost:4318/v1/traces'
   */
  url?: string;
  /**
   * Extra HTTP headers (e.g. an API key of a hosted collector).
   * @default {}
   */
  headers?: Record<string, string>;
  /**
   * Time limit of one OTLP request in milliseconds (the OTLP exporter retries within it).
   * @default 10_000
   */
  timeoutMs?: number;
  /**
   * `service.name` of the private tracer provider's resource.
   * @default 'agent-compaction'
   */
  serviceName?: string;
}

async function need<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw new CompactError('missing_dependency', `install ${name}: npm i ${name}`, { cause: error });
  }
}

/**
 * A self-contained OTLP exporter for apps without an OpenTelemetry setup of their own (the
 * config's `telemetry.exporter: otlp`): it builds a private `BasicTracerProvider` with a
 * `BatchSpanProcessor` and the `OTLPTraceExporter` (JSON over HTTP), never registered
 * globally, and feeds it through {@link otelExporter}. Needs `@opentelemetry/api`,
 * `@opentelemetry/sdk-trace-base` ^2 and `@opentelemetry/exporter-trace-otlp-http` <0.300
 * (Node 20), imported on first use. Apps that already run an SDK should use
 * `instrumentManager` or `otelExporter` with their own tracer instead.
 *
 * @example
 * ```ts
 * import { otlpExporter } from 'agent-compaction/otel';
 * const manager = new CompactManager({ model: 'gpt-4o', maxContextTokens: 128_000,
 *   exporters: [otlpExporter({ url: 'http://127.0.0.1:4318/v1/traces' })] });
 * ```
 */
export function otlpExporter(options: OtlpExporterOptions = {}): EventExporter {
  const { url, headers, serviceName, timeoutMs, ...rest } = options;
  let ready:
    | Promise<{ inner: EventExporter; provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } }>
    | undefined;
  const setup = () => {
    ready ??= (async () => {
      const api = rest.api ?? (await need('@opentelemetry/api', () => import('@opentelemetry/api')));
      const sdk = await need('@opentelemetry/sdk-trace-base', () => import('@opentelemetry/sdk-trace-base'));
      const { OTLPTraceExporter } = await need(
        '@opentelemetry/exporter-trace-otlp-http',
        () => import('@opentelemetry/exporter-trace-otlp-http'),
      );
      const resources = await import('@opentelemetry/resources').catch(() => undefined);
      const exporter = new OTLPTraceExporter({
        ...(url === undefined ? {} : { url }),
        ...(headers === undefined ? {} : { headers }),
        ...(timeoutMs === undefined ? {} : { timeoutMillis: timeoutMs }),
      });
      const provider = new sdk.BasicTracerProvider({
        spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
        ...(resources
          ? {
              resource: resources.resourceFromAttributes({
                'service.name': serviceName ?? 'agent-compaction',
              }),
            }
          : {}),
      });
      const inner = otelExporter({ ...rest, api, tracer: provider.getTracer('agent-compaction') });
      return { inner, provider };
    })();
    ready.catch(() => {
      ready = undefined;
    });
    return ready;
  };
  const guard = async (run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      process.stderr.write(
        `[agent-compaction] otlp exporter: ${String((error as Error)?.message ?? error)}\n`,
      );
    }
  };
  let closed = false;
  return {
    name: 'otlp',
    export(events) {
      if (closed || events.length === 0) return Promise.resolve();
      return guard(async () => (await setup()).inner.export(events));
    },
    forceFlush() {
      if (!ready) return Promise.resolve();
      return guard(async () => {
        const { inner, provider } = await setup();
        await inner.forceFlush?.();
        await provider.forceFlush();
      });
    },
    shutdown() {
      if (closed) return Promise.resolve();
      closed = true;
      if (!ready) return Promise.resolve();
      return guard(async () => {
        const { inner, provider } = await setup();
        await inner.shutdown?.();
        await provider.shutdown();
      });
    },
  };
}
