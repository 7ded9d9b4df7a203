/**
 * The console exporter's `summary` format: one line per compaction, error and warning. A
 * compaction's events arrive one by one (the decision first, the pruned messages last); they
 * are gathered by operation and written as one line when the compaction ends.
 */
import type { AnyCompactEvent } from '../../core/events/events.js';
import { isoTime, operationIdOf } from '../event-utils.js';

const LEVELS: Readonly<Record<string, string>> = {
  clear_tool_results: 'cleared',
  shorten_arguments: 'shortened',
  summarize: 'summarized',
  cut_oversized: 'cut',
};

/** Decision reasons as people say them. */
const REASONS: Readonly<Record<string, string>> = {
  'usage_pct >= trigger_pct': 'at the trigger',
  'over budget': 'over the budget',
  manual: 'forced',
  'cache cold': 'cache cold after an idle gap',
};

const number = (value: unknown) => (Number(value) || 0).toLocaleString('en');

interface Pending {
  reason: string;
  levels: string[];
  summarizer?: string;
}

/** Turns events into the `summary` format's lines (keeps at most 1,000 open compactions). */
export class CompactionLines {
  readonly #open = new Map<string, Pending>();

  /** The line an event completes, if any. */
  line(event: AnyCompactEvent): string | undefined {
    const p = (event.properties ?? {}) as unknown as Record<string, unknown>;
    const id = operationIdOf(event) ?? String(event.spanId);
    const head = `[compact] ${isoTime(event.startTime).slice(11, 19)} session=${String(event.sessionId)}`;
    switch (event.name) {
      case 'compact.trigger_decision':
        if (p.triggered === true) {
          if (this.#open.size >= 1_000) this.#open.delete(this.#open.keys().next().value as string);
          const reason = String(p.reason ?? '');
          this.#open.set(id, { reason: REASONS[reason] ?? reason, levels: [] });
        }
        return undefined;
      case 'compact.reduction': {
        const level = LEVELS[String(p.level)] ?? String(p.level);
        this.#open.get(id)?.levels.push(`${level} ${number(p.tokensSaved)}`);
        return undefined;
      }
      case 'compact.summary_created': {
        const open = this.#open.get(id);
        if (open) open.summarizer = String(p.summarizer ?? '');
        return undefined;
      }
      case 'compact.pruned_messages': {
        const open = this.#open.get(id);
        this.#open.delete(id);
        const levels = open && open.levels.length > 0 ? open.levels.join(', ') : 'nothing to reduce';
        const version =
          Number(p.version) > 0
            ? `; summary v${p.version}${open?.summarizer ? ` (${open.summarizer})` : ''}`
            : '';
        return `${head} compacted ${number(p.tokensBefore)} -> ${number(p.tokensAfter)} tokens (${open?.reason ?? 'compaction'}): ${levels}${version}`;
      }
      case 'compact.error':
        return `${head} ERROR ${String(p.errorType)}: ${String(p.message)} (fallback ${String(p.fallback)})`;
      case 'compact.warning':
        return `${head} warning ${String(p.code)}: ${String(p.message)}`;
      case 'compact.overflow_recovery':
        return `${head} the provider rejected ${number(p.sentTokens)} tokens; retried within ${number(p.retryWindow)} (${number(p.retryTokens)} sent)`;
      case 'compact.unknown_model':
        return `${head} warning: ${String(p.message ?? `unknown model ${String(p.model)}`)}`;
      default:
        return undefined;
    }
  }
}
