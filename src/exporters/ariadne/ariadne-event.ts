/** Ariadne's trace event. */
export interface AriadneTraceEvent {
  type: 'trace';
  trace_id: string;
  name?: string;
  group_id?: string;
  started_at?: string;
  ended_at?: string;
  /** Values must be strings. */
  metadata?: Record<string, string>;
}

/** Ariadne's span event. */
export interface AriadneSpanEvent {
  type: 'span';
  trace_id: string;
  span_id: string;
  parent_id?: string;
  kind?: string;
  name?: string;
  started_at?: string;
  ended_at?: string;
  data?: Record<string, unknown>;
  status?: 'ok' | 'error';
}

/** An event of Ariadne's ingest API. */
export type AriadneEvent = AriadneTraceEvent | AriadneSpanEvent;
