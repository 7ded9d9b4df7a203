import type { Redactor } from '../redaction/redactor.js';

/**
 * The redactor each manager redacts with (its own rules, `extraPatterns`, a `custom` function),
 * for what an integration writes outside the manager's events: the proxy's log line. Internal:
 * not exported from the package's entry.
 */
const redactors = new WeakMap<object, Redactor>();

/** Records `manager`'s redactor (none when its redaction is off). */
export function setManagerRedactor(manager: object, redact: Redactor | undefined): void {
  if (redact) redactors.set(manager, redact);
}

/** The redactor `manager` redacts with, or undefined when its redaction is off. */
export function managerRedactorOf(manager: object): Redactor | undefined {
  return redactors.get(manager);
}
