/** An error for a log line: its message, with its cause's when it has one. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const detail =
    cause instanceof Error
      ? `${(cause as { code?: string }).code ?? cause.name}: ${cause.message}`
      : cause
        ? String(cause)
        : '';
  return detail ? `${error.message} (${detail})` : error.message;
}
