/** Why an operation failed, in words (a timeout of the client often has no message). */
export function describeCause(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 4; depth++) {
    const text =
      current instanceof Error
        ? [
            current.name !== 'Error' ? current.name : '',
            (current as { code?: unknown }).code,
            current.message,
          ]
            .filter((part) => part !== undefined && part !== '' && part !== null)
            .join(' ')
        : String(current);
    if (text !== '' && !parts.some((part) => part.includes(text))) parts.push(text);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ') || 'unknown error';
}
