/**
 * The first key given twice in one object of a JSON text. `JSON.parse` keeps the last silently,
 * where the YAML parser refuses a repeated key: a config file is refused either way.
 */

/** A repeated key: its path (`['policy', 'trigger_pct']`) and the line of its second use. */
export interface DuplicateKey {
  path: (string | number)[];
  line: number;
}

interface Frame {
  /** The keys seen so far (an object), or undefined (an array). */
  keys: Set<string> | undefined;
  /** The key whose value is being read, or the index of the element. */
  at: string | number;
  /** Whether the next string is a key. */
  expectKey: boolean;
}

/** The first duplicate key of `text`, which `JSON.parse` has accepted; undefined when none. */
export function findDuplicateKey(text: string): DuplicateKey | undefined {
  const stack: Frame[] = [];
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const top = stack.at(-1);
    if (char === '\n') line++;
    else if (char === '{') stack.push({ keys: new Set(), at: '', expectKey: true });
    else if (char === '[') stack.push({ keys: undefined, at: 0, expectKey: false });
    else if (char === '}' || char === ']') stack.pop();
    else if (char === ',' && top) {
      if (top.keys) top.expectKey = true;
      else top.at = Number(top.at) + 1;
    } else if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        top.at = key;
        top.expectKey = false;
        if (top.keys.has(key)) return { path: stack.map((frame) => frame.at), line };
        top.keys.add(key);
      }
      i = end;
    }
  }
  return undefined;
}
