/**
 * What agent-compaction knows about models: the tokenizer (exact for OpenAI, an estimate
 * for everyone else), the context window from each provider's documentation, and who
 * serves it (which image formula applies). Names are matched by family prefix after
 * provider prefixes (`openai/`, `models/`, `meta-llama/`, Bedrock's `us.anthropic.`),
 * Ollama tags (`:8b`) and Vertex versions (`@20241022`) are removed, so dated snapshots
 * and aliases (`gpt-4o-2024-08-06`, `claude-3-5-sonnet-latest`, `llama3.1:8b`) resolve to
 * their family.
 */

/** The BPE encodings bundled (through `gpt-tokenizer`). */
export type EncodingName = 'o200k_base' | 'cl100k_base';

/** Who serves a model family (selects the image-counting formula). */
export type ModelProvider = 'openai' | 'anthropic' | 'google' | 'meta' | 'qwen' | 'mistral' | 'deepseek';

/** The window assumed for a model the table does not know. */
export const UNKNOWN_MODEL_CONTEXT_WINDOW = 128_000;

/** One family of the table. */
export interface ModelFamily {
  /** The family's canonical name (also a known name for closest-match suggestions). */
  readonly family: string;
  /** Matches the normalized name's start. */
  readonly pattern: RegExp;
  readonly provider: ModelProvider;
  /** The context window in tokens (input and output together), from the provider's docs. */
  readonly contextWindow: number;
  readonly encoding: EncodingName;
  /** True when the model's own tokenizer is public and bundled (counts are exact). */
  readonly exact: boolean;
  /** Dated snapshots and aliases (suggestions for typos; they match through `pattern`). */
  readonly names?: readonly string[];
}

type Tokenizer = { readonly encoding: EncodingName; readonly exact: boolean };
const o200k: Tokenizer = { encoding: 'o200k_base', exact: true };
const cl100k: Tokenizer = { encoding: 'cl100k_base', exact: true };
const estimate: Tokenizer = { encoding: 'o200k_base', exact: false };

function openai(
  family: string,
  contextWindow: number,
  names: string[] = [],
  enc: Tokenizer = o200k,
): ModelFamily {
  const escaped = family.replace(/[.]/g, '\\.');
  return { family, pattern: new RegExp(`^${escaped}`), provider: 'openai', contextWindow, ...enc, names };
}

function other(
  provider: ModelProvider,
  family: string,
  pattern: RegExp,
  contextWindow: number,
  names: string[] = [],
): ModelFamily {
  return { family, pattern, provider, contextWindow, ...estimate, names };
}

const claude = (family: string, pattern: RegExp, contextWindow: number, names: string[]) =>
  other('anthropic', family, pattern, contextWindow, names);

/**
 * The model table, most specific first. Windows: OpenAI's model pages, Anthropic's models
 * overview (200k; the 1M Sonnet beta is opt-in), Google's Gemini models page, Meta's model
 * cards, Qwen's, Mistral's and DeepSeek's API docs (native windows, without YaRN scaling).
 */
export const MODEL_FAMILIES: readonly ModelFamily[] = [
  // OpenAI
  openai('gpt-5-chat', 128_000, ['gpt-5-chat-latest']),
  openai('gpt-5', 400_000, [
    'gpt-5-2025-08-07',
    'gpt-5-mini',
    'gpt-5-nano',
    'gpt-5-codex',
    'gpt-5.1',
    'gpt-5-pro',
  ]),
  openai('gpt-4.1', 1_047_576, ['gpt-4.1-2025-04-14', 'gpt-4.1-mini', 'gpt-4.1-nano']),
  openai('gpt-4.5', 128_000, ['gpt-4.5-preview']),
  openai('gpt-4o', 128_000, [
    'gpt-4o-2024-08-06',
    'gpt-4o-2024-11-20',
    'gpt-4o-mini',
    'gpt-4o-mini-2024-07-18',
  ]),
  openai('chatgpt-4o', 128_000, ['chatgpt-4o-latest']),
  openai('o1-mini', 128_000),
  openai('o1-preview', 128_000),
  openai('o1', 200_000, ['o1-2024-12-17', 'o1-pro']),
  openai('o3', 200_000, ['o3-2025-04-16', 'o3-mini', 'o3-pro']),
  openai('o4-mini', 200_000, ['o4-mini-2025-04-16']),
  openai('gpt-oss', 131_072, ['gpt-oss-120b', 'gpt-oss-20b']),
  openai('codex-mini', 200_000, ['codex-mini-latest']),
  openai('gpt-4-turbo', 128_000, ['gpt-4-turbo-2024-04-09'], cl100k),
  openai('gpt-4-1106', 128_000, ['gpt-4-1106-preview'], cl100k),
  openai('gpt-4-0125', 128_000, ['gpt-4-0125-preview'], cl100k),
  openai('gpt-4-32k', 32_768, [], cl100k),
  openai('gpt-4', 8_192, ['gpt-4-0613'], cl100k),
  openai('gpt-3.5-turbo', 16_385, ['gpt-3.5-turbo-0125'], cl100k),
  openai('text-embedding-3', 8_191, ['text-embedding-3-small', 'text-embedding-3-large'], cl100k),
  openai('text-embedding-ada', 8_191, ['text-embedding-ada-002'], cl100k),
  // Anthropic (dated snapshots and aliases as listed in Anthropic's models overview)
  claude('claude-haiku-4-5', /^claude-haiku-4-5/, 200_000, ['claude-haiku-4-5-20251001']),
  claude('claude-sonnet-4-5', /^claude-sonnet-4-5/, 200_000, ['claude-sonnet-4-5-20250929']),
  claude('claude-opus-4-1', /^claude-opus-4-1/, 200_000, ['claude-opus-4-1-20250805']),
  claude('claude-sonnet-4', /^claude-sonnet-4/, 200_000, ['claude-sonnet-4-0', 'claude-sonnet-4-20250514']),
  claude('claude-opus-4', /^claude-opus-4/, 200_000, ['claude-opus-4-0', 'claude-opus-4-20250514']),
  claude('claude-3-7-sonnet', /^claude-3-7-sonnet/, 200_000, [
    'claude-3-7-sonnet-latest',
    'claude-3-7-sonnet-20250219',
  ]),
  claude('claude-3-5-sonnet', /^claude-3-5-sonnet/, 200_000, [
    'claude-3-5-sonnet-latest',
    'claude-3-5-sonnet-20241022',
    'claude-3-5-sonnet-20240620',
  ]),
  claude('claude-3-5-haiku', /^claude-3-5-haiku/, 200_000, [
    'claude-3-5-haiku-latest',
    'claude-3-5-haiku-20241022',
  ]),
  claude('claude-3-opus', /^claude-3-opus/, 200_000, ['claude-3-opus-latest', 'claude-3-opus-20240229']),
  claude('claude-3-sonnet', /^claude-3-sonnet/, 200_000, ['claude-3-sonnet-20240229']),
  claude('claude-3-haiku', /^claude-3-haiku/, 200_000, ['claude-3-haiku-20240307']),
  claude('claude-2.1', /^claude-2\.1/, 200_000, []),
  claude('claude-2', /^claude-(2|instant)/, 100_000, ['claude-instant-1.2']),
  claude('claude', /^claude/, 200_000, []),
  // Google
  other('google', 'gemini-2.5-pro', /^gemini-2\.5-pro/, 1_048_576),
  other('google', 'gemini-2.5-flash', /^gemini-2\.5-flash/, 1_048_576, ['gemini-2.5-flash-lite']),
  other('google', 'gemini-2.0-flash', /^gemini-2\.0-flash/, 1_048_576, [
    'gemini-2.0-flash-lite',
    'gemini-2.0-flash-001',
  ]),
  other('google', 'gemini-1.5-pro', /^gemini-1\.5-pro/, 2_097_152, ['gemini-1.5-pro-002']),
  other('google', 'gemini-1.5-flash-8b', /^gemini-1\.5-flash-8b/, 1_048_576),
  other('google', 'gemini-1.5-flash', /^gemini-1\.5-flash/, 1_048_576, ['gemini-1.5-flash-002']),
  other('google', 'gemini-1.0-pro', /^gemini-(1\.0-)?pro/, 32_760),
  other('google', 'gemma-3', /^gemma-?3/, 131_072, ['gemma3']),
  // Meta (Ollama writes llama3.1, Hugging Face Llama-3.1-8B-Instruct)
  other('meta', 'llama-4-scout', /^(meta-)?llama-?4-scout/, 10_000_000),
  other('meta', 'llama-4-maverick', /^(meta-)?llama-?4-maverick/, 1_048_576),
  other('meta', 'llama-3.3', /^(meta-)?llama-?3\.3/, 131_072, ['llama3.3', 'llama-3.3-70b-instruct']),
  other('meta', 'llama-3.2', /^(meta-)?llama-?3\.2/, 131_072, ['llama3.2', 'llama-3.2-3b-instruct']),
  other('meta', 'llama-3.1', /^(meta-)?llama-?3\.1/, 131_072, ['llama3.1', 'llama-3.1-8b-instruct']),
  other('meta', 'llama-3', /^(meta-)?llama-?3/, 8_192, ['llama3', 'llama-3-8b-instruct', 'llama-3-70b']),
  // Qwen (native windows)
  other('qwen', 'qwen3-coder', /^qwen-?3-coder/, 262_144, ['qwen3-coder-480b-a35b-instruct']),
  other('qwen', 'qwen3', /^qwen-?3/, 32_768, ['qwen3-235b-a22b', 'qwen3-32b', 'qwen3-8b']),
  other('qwen', 'qwen2.5', /^qwen-?2\.5/, 32_768, ['qwen2.5-coder', 'qwen2.5-72b-instruct']),
  other('qwen', 'qwen2', /^qwen-?2/, 32_768),
  other('qwen', 'qwq', /^qwq/, 131_072, ['qwq-32b']),
  other('qwen', 'qwen-max', /^qwen-max/, 32_768),
  other('qwen', 'qwen-plus', /^qwen-plus/, 131_072),
  other('qwen', 'qwen-turbo', /^qwen-turbo/, 1_000_000),
  // Mistral
  other('mistral', 'mistral-large', /^mistral-large/, 131_072, [
    'mistral-large-latest',
    'mistral-large-2411',
  ]),
  other('mistral', 'mistral-medium', /^mistral-medium/, 131_072, [
    'mistral-medium-latest',
    'mistral-medium-2505',
  ]),
  other('mistral', 'mistral-small', /^mistral-small/, 131_072, [
    'mistral-small-latest',
    'mistral-small-2503',
  ]),
  other('mistral', 'magistral', /^magistral/, 40_000, ['magistral-medium-latest', 'magistral-small-latest']),
  other('mistral', 'codestral', /^codestral/, 262_144, ['codestral-latest', 'codestral-2501']),
  other('mistral', 'devstral', /^devstral/, 131_072, ['devstral-small-latest', 'devstral-medium-latest']),
  other('mistral', 'ministral', /^ministral/, 131_072, ['ministral-8b-latest', 'ministral-3b-latest']),
  other('mistral', 'pixtral', /^pixtral/, 131_072, ['pixtral-large-latest', 'pixtral-12b']),
  other('mistral', 'mistral-nemo', /^(open-)?mistral-nemo/, 131_072, ['open-mistral-nemo']),
  other('mistral', 'mixtral-8x22b', /^(open-)?mixtral-8x22b/, 65_536),
  other('mistral', 'mixtral-8x7b', /^(open-)?mixtral/, 32_768),
  other('mistral', 'mistral-7b', /^(open-)?mistral(-7b)?/, 32_768, ['open-mistral-7b', 'mistral']),
  // DeepSeek
  other('deepseek', 'deepseek-coder-v2', /^deepseek-coder-v2/, 131_072),
  other('deepseek', 'deepseek-coder', /^deepseek-coder/, 16_384),
  other('deepseek', 'deepseek-chat', /^deepseek-(chat|reasoner|v3|r1|v2\.5)/, 131_072, [
    'deepseek-reasoner',
    'deepseek-v3',
    'deepseek-r1',
  ]),
];

/** What agent-compaction knows about a model. */
export interface ModelInfo {
  /** The encoding, or the one estimates are based on. */
  encoding: EncodingName;
  /** True when the model's own tokenizer is public (counts are exact). */
  exact: boolean;
  /** The context window in tokens; {@link UNKNOWN_MODEL_CONTEXT_WINDOW} for unknown models. */
  contextWindow: number;
  /** True when the name matched a family of the table. */
  known: boolean;
  /** The matched family's canonical name. */
  family?: string;
  /** Who serves the family (selects the image formula). */
  provider?: ModelProvider;
  /** For an unknown name: the known name closest to it (typo suggestions). */
  closest?: string;
}

/**
 * Normalizes a model name: lowercase, the last `/` segment (`openai/gpt-4o`,
 * `models/gemini-2.5-pro`, `meta-llama/Llama-3.1-8B-Instruct`), without Bedrock's region and
 * vendor prefixes (`us.anthropic.`), Ollama tags (`:8b`) or Vertex versions (`@20241022`).
 */
export function normalizeModelName(model: string): string {
  let name = model.trim().toLowerCase();
  name = name.slice(name.lastIndexOf('/') + 1);
  name = name.replace(/^((us|eu|apac|global)\.)?(anthropic|meta|mistral|deepseek|qwen|openai|google)\./, '');
  const cut = name.search(/[:@]/);
  return cut >= 0 ? name.slice(0, cut) : name;
}

/**
 * Levenshtein distance of `a` and `b`, or `bound + 1` as soon as it is known to exceed
 * `bound` (two rows, O(|a| x |b|) at worst; names are short).
 */
export function boundedLevenshtein(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) > bound) return bound + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    if (rowMin > bound) return bound + 1;
    [previous, current] = [current, previous];
  }
  return previous[b.length]!;
}

const KNOWN_NAMES: readonly string[] = MODEL_FAMILIES.flatMap((f) => [f.family, ...(f.names ?? [])]);

/** Names longer than this are compared on their first this-many characters only. */
const MAX_COMPARED_CHARS = 64;

/** The known model name closest to `name` (edit distance; the first listed wins ties). */
export function closestModelName(name: string): string {
  const probe = normalizeModelName(name).slice(0, MAX_COMPARED_CHARS);
  let best = KNOWN_NAMES[0]!;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const known of KNOWN_NAMES) {
    const bound = Number.isFinite(bestDistance) ? bestDistance - 1 : MAX_COMPARED_CHARS;
    if (bound < 0) break;
    const distance = boundedLevenshtein(probe, known, bound);
    if (distance < bestDistance) {
      best = known;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Looks a model up by family prefix. OpenAI models get their real encoding (o200k_base for
 * gpt-4o, gpt-4.1, gpt-5 and the o-series; cl100k_base for gpt-4 and gpt-3.5); every other
 * model gets an o200k_base estimate. An unknown name gets {@link UNKNOWN_MODEL_CONTEXT_WINDOW},
 * `known: false` and the closest known name.
 *
 * @example
 * ```ts
 * modelInfo('claude-3-5-sonnet-20241022').contextWindow; // 200_000
 * modelInfo('gtp-4o'); // { known: false, closest: 'gpt-4o', contextWindow: 128_000, ... }
 * ```
 */
export function modelInfo(model: string): ModelInfo {
  const name = normalizeModelName(model);
  for (const f of MODEL_FAMILIES) {
    if (f.pattern.test(name)) {
      return {
        encoding: f.encoding,
        exact: f.exact,
        contextWindow: f.contextWindow,
        known: true,
        family: f.family,
        provider: f.provider,
      };
    }
  }
  return {
    encoding: 'o200k_base',
    exact: false,
    contextWindow: UNKNOWN_MODEL_CONTEXT_WINDOW,
    known: false,
    closest: closestModelName(model),
  };
}
