/**
 * Resolves on the first SIGINT or SIGTERM, then stops listening for both. Call it before saying
 * the command listens: a SIGTERM sent on reading that line then stops the command gracefully
 * instead of killing it.
 */
export function stopSignal(): Promise<void> {
  return new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
