/**
 * Expands the templates of test/fixtures/redaction/secret-families.json: each
 * `⟨name:CLASS:LENGTH⟩` placeholder becomes LENGTH random characters of CLASS (the same value
 * wherever `⟨name⟩` repeats it), from a PRNG seeded by the row, so a failure reproduces and no
 * secret-looking value is ever committed.
 */

const ALPHABETS: Readonly<Record<string, string>> = {
  ALNUM: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789',
  HEX: '0123456789abcdef',
  UPHEX: '0123456789ABCDEF',
  UPPER: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789',
  LOWER: 'abcdefghijklmnopqrstuvwxyz0123456789',
  DIGITS: '0123456789',
  B64: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/',
  B64URL: 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-',
  BECH32: 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L',
};

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function hash(text: string): number {
  let h = 2166136261;
  for (let index = 0; index < text.length; index++) h = Math.imul(h ^ text.charCodeAt(index), 16777619);
  return h >>> 0;
}

const PLACEHOLDER = /⟨([a-z]+)(?::([A-Z0-9]+):(\d+))?⟩/g;

/** Expands a row's templates with the same values: `[text, secret?]`. */
export function expandTemplates(seed: string, ...templates: string[]): string[] {
  const random = prng(hash(seed));
  const values = new Map<string, string>();
  const fill = (template: string) =>
    template.replace(PLACEHOLDER, (_match, name: string, kind?: string, length?: string) => {
      if (kind !== undefined && length !== undefined && !values.has(name)) {
        const alphabet = ALPHABETS[kind];
        if (alphabet === undefined) throw new Error(`unknown placeholder class ${kind}`);
        let value = '';
        for (let index = 0; index < Number(length); index++) {
          value += alphabet[Math.floor(random() * alphabet.length)];
        }
        values.set(name, value);
      }
      const value = values.get(name);
      if (value === undefined) throw new Error(`placeholder ⟨${name}⟩ used before it is defined`);
      return value;
    });
  return templates.map(fill);
}

/** The parts of `secret` that survive in `out`: every window of 8 characters (or the whole, if shorter). */
export function survivingParts(secret: string, out: string): string[] {
  const width = Math.min(8, secret.length);
  const found: string[] = [];
  for (let start = 0; start + width <= secret.length; start++) {
    const part = secret.slice(start, start + width);
    if (out.includes(part)) found.push(part);
  }
  return found;
}
