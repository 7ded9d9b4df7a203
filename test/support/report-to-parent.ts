/**
 * Sends `message` to the parent process over IPC when it still listens. The parent may be gone
 * (its test ended, or it killed this child): the report then goes nowhere, instead of crashing
 * the child with an unhandled EPIPE (seen on a busy CI machine).
 */
export function reportToParent(message: unknown): void {
  if (process.connected) process.send?.(message, undefined, undefined, () => {});
}
