/**
 * Reads the fields of trace events that may come from elsewhere (a trace file is data, not
 * code): a number is used only when it is a finite number, a string only when it is a string,
 * a list or record only in its expected shape. Anything else is skipped and counted in a note
 * the report shows, so a hostile or broken trace can neither inject markup through a field
 * the page prints nor pass for real figures.
 */

/** A record of an event's properties (or a nested object), or undefined when it is not one. */
export type Fields = Readonly<Record<string, unknown>>;

/** Distinct notes kept; past this, further kinds of skipped field are only counted. */
const MAX_NOTES = 40;

/** Collects what was skipped while reading a trace. */
export class TraceFieldReader {
  readonly #counts = new Map<string, number>();
  #dropped = 0;

  /** Records one skipped field under `where` (e.g. `compact.pruned_messages.version`). */
  skip(where: string, why: string): void {
    const key = `${where}: ${why}`;
    const count = this.#counts.get(key);
    if (count !== undefined) this.#counts.set(key, count + 1);
    else if (this.#counts.size < MAX_NOTES) this.#counts.set(key, 1);
    else this.#dropped++;
  }

  /** A finite number, or undefined (a present value of another type is noted). */
  number(fields: Fields | undefined, key: string, where: string): number | undefined {
    const value = fields?.[key];
    if (value === undefined) return undefined;
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    this.skip(`${where}.${key}`, 'not a finite number, skipped');
    return undefined;
  }

  /** A string, or undefined (a present value of another type is noted). */
  string(fields: Fields | undefined, key: string, where: string): string | undefined {
    const value = fields?.[key];
    if (value === undefined) return undefined;
    if (typeof value === 'string') return value;
    this.skip(`${where}.${key}`, 'not a string, skipped');
    return undefined;
  }

  /** A boolean, or undefined (a present value of another type is noted). */
  boolean(fields: Fields | undefined, key: string, where: string): boolean | undefined {
    const value = fields?.[key];
    if (value === undefined) return undefined;
    if (typeof value === 'boolean') return value;
    this.skip(`${where}.${key}`, 'not a boolean, skipped');
    return undefined;
  }

  /** A nested object, or undefined (a present value of another shape is noted). */
  record(fields: Fields | undefined, key: string, where: string): Fields | undefined {
    const value = fields?.[key];
    if (value === undefined) return undefined;
    if (isFields(value)) return value;
    this.skip(`${where}.${key}`, 'not an object, skipped');
    return undefined;
  }

  /** The strings of a list (other items noted and skipped); undefined when it is not a list. */
  strings(fields: Fields | undefined, key: string, where: string): string[] | undefined {
    const value = fields?.[key];
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.skip(`${where}.${key}`, 'not a list, skipped');
      return undefined;
    }
    const out: string[] = [];
    for (const item of value) {
      if (typeof item === 'string') out.push(item);
      else this.skip(`${where}.${key}[]`, 'an item that is not a string, skipped');
    }
    return out;
  }

  /** The notes, one line each, in the order first seen. */
  notes(): string[] {
    const lines = [...this.#counts].map(([note, count]) => (count === 1 ? note : `${note} (${count} times)`));
    if (this.#dropped > 0) lines.push(`${this.#dropped} more fields of other kinds skipped`);
    return lines;
  }
}

/** True for a plain object (not null, not a list). */
export function isFields(value: unknown): value is Fields {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
