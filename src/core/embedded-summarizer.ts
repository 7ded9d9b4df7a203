import type { CompactMessage } from './message.js';
import type { StrategyName, SummarizeRequest, SummarizeResult, Summarizer } from './summarizer.js';

/** One bullet of an extractive summary: text from the input, with the weight that decides whether it fits. */
interface Item {
  text: string;
  /** Higher is kept first when the summary is over its budget. */
  score: number;
  /** Position in the input (previous summary first): items render in this order. */
  order: number;
}

/** A section of an extractive summary. */
interface Section {
  title: string;
  items: Item[];
  /** Entity lists: when the budget is tight, an entity already quoted in a kept sentence is dropped. */
  entities?: boolean;
  /** At most this many items. */
  cap?: number;
}

const MAX_SENTENCE_CHARS = 220;
const MAX_ITEMS_PER_SECTION = 40;
const MAX_ENTITIES = 80;
/** Score added to a section's best, second and third items. */
const RANK_BONUS = [25, 15, 10];

const GOAL =
  /\b(goal|objective|need to|needs to|want to|wants to|please|should|success criteria|so that|make sure|task is|implement|fix|build|add|create|refactor|investigate|find)\b/i;
const CONSTRAINT =
  /\b(must|must not|never|do not|don't|only|always|required|requirement|cannot|can't|at most|at least|no more than|within|deadline|budget|limit|sla|compliance|security|policy|forbidden|not allowed|hard rule|keep in mind)\b/i;
/** Words that mark a choice made, as opposed to narration of the next step. */
const STRONG_DECISION =
  /\b(decided|decide|decision|will use|going with|go with|chose|choose|chosen|instead of|rather than|opted|plan is|approach is|the fix is|root cause|turns out|settled on|we will|we'll keep|we'll use)\b/i;
const DECISION =
  /\b(decided|decide|will use|going with|chose|choose|chosen|instead of|we'll|i'll|let's|let me|plan is|approach|because|since|so that|the fix|root cause|turns out)\b/i;
/** Open work stated as such. */
const STRONG_OPEN =
  /\b(todo|to do|to-do|next step|remaining|pending|blocked|blocker|still need|still open|not yet|follow[- ]up|open question|unresolved|waiting on|needs? to be done)\b/i;
const OPEN_ITEM =
  /\b(todo|to do|next step|next,|remaining|pending|blocked|blocker|still need|not yet|follow[- ]up|open question|unresolved|fails?|failed|failing|error|broken)\b/i;
/** How the user will judge the work: kept with the task. */
const CRITERIA = /\b(success criteria|acceptance criteria|done when|definition of done)\b/i;
const RATIONALE = /\b(because|since|so that|in order to|to avoid|due to)\b/i;
const FAILURE =
  /\b(fail(?:s|ed|ing|ure)?|error|exception|traceback|panic|denied|not found|refused|timed? ?out)\b/i;

type EntityKind =
  | 'url'
  | 'uuid'
  | 'ticket'
  | 'branch'
  | 'path'
  | 'file'
  | 'hash'
  | 'issue'
  | 'quantity'
  | 'money'
  | 'constant'
  | 'version'
  | 'error'
  | 'code';

/** Patterns of identifiers, in the order they are looked for, with the weight of their kind. */
const ENTITY_PATTERNS: { kind: EntityKind; pattern: RegExp; weight: number; group?: number }[] = [
  { kind: 'url', pattern: /\bhttps?:\/\/[^\s)\]>"'`]+/g, weight: 60 },
  { kind: 'uuid', pattern: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, weight: 75 },
  { kind: 'ticket', pattern: /\b[A-Z][A-Z0-9]{1,9}-\d+\b/g, weight: 70 },
  {
    kind: 'branch',
    pattern: /\b(?:branch|checkout(?: -b)?|switch(?: -c)?|origin\/)\s*['"]?([\w][\w.-]*(?:\/[\w.-]+)+)/g,
    weight: 75,
    group: 1,
  },
  { kind: 'path', pattern: /(?:\.{1,2}\/|\/)?(?:[\w.@-]+\/)+[\w.@-]+\.[A-Za-z0-9]{1,8}\b/g, weight: 60 },
  {
    kind: 'file',
    pattern:
      /\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|md|rst|json|ya?ml|go|rs|java|kt|rb|php|cs|cpp|c|h|sql|sh|toml|txt|css|html|ini|cfg|lock|pl|cgi)\b/g,
    weight: 45,
  },
  { kind: 'hash', pattern: /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/g, weight: 35 },
  { kind: 'issue', pattern: /(?:^|\s)#\d{1,6}\b/g, weight: 40 },
  {
    kind: 'quantity',
    pattern:
      /\b\d+(?:[.,]\d+)?\s?(?:ms|s|sec|seconds?|minutes?|mins?|hours?|h|days?|KB|MB|GB|TB|KiB|MiB|GiB|k|%|tokens?|req\/s|rps|qps|USD|EUR|lines?|files?|rows?|replicas?|attempts?)\b/g,
    weight: 55,
  },
  { kind: 'money', pattern: /[$€£]\s?\d+(?:[.,]\d+)?[kKmM]?\b/g, weight: 55 },
  { kind: 'constant', pattern: /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g, weight: 40 },
  { kind: 'version', pattern: /\bv?\d+\.\d+\.\d+(?:-[\w.]+)?\b/g, weight: 45 },
  { kind: 'error', pattern: /\b[A-Z]\w*(?:Error|Exception)\b/g, weight: 50 },
];
/** Code names quoted in prose (`like_this`): only from user and assistant text. */
const BACKTICKED = /`([A-Za-z_][\w.]{2,60})`/g;
/** Kinds whose presence makes a sentence or a tool result notable. */
const HIGH_VALUE = new Set<EntityKind>(['uuid', 'ticket', 'branch', 'path', 'url', 'error']);

const FILE_PATH =
  /(?:\.{1,2}\/|\/)?(?:[\w.@-]+\/)*[\w.@-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|md|json|ya?ml|go|rs|java|kt|rb|php|cs|cpp|c|h|sql|sh|toml|css|html|ini|cfg)\b/g;
const FUNCTION_NAME =
  /\b(?:function|def|class|func|fn|interface|type|const|method)\s+([A-Za-z_][\w]*)|\b([A-Za-z_][\w]*)\s*\(\)/g;
const CHANGE_VERB =
  /\b(add(?:ed|s)?|remov(?:ed|es)?|renam(?:ed|es)?|fix(?:ed|es)?|chang(?:ed|es)|updat(?:ed|es)|refactor(?:ed|s)?|creat(?:ed|es)|delet(?:ed|es)|replac(?:ed|es)|modif(?:ied|ies)|edit(?:ed|s)?|implement(?:ed|s)?|wrote|written)\b/i;

function clip(text: string, max = MAX_SENTENCE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=[A-Z0-9"'`(])|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length >= 8 && /[A-Za-z\u00C0-\uFFFF]/.test(s));
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim().length > 0) ?? '';
  return clip(line, 160);
}

/** Lines of code (numbered listings, `throw`, passing test marks) are not failure reports. */
const CODE_LINE = /^\s*(?:\d+[:|]|[✓√])|\b(?:throw|raise|new Error|catch|except)\b/;

/** The first line that reports a failure, else the first line. */
function outcomeLine(text: string): string {
  const failing = text.split('\n').find((l) => FAILURE.test(l) && !CODE_LINE.test(l));
  return failing ? clip(failing, 160) : firstLine(text);
}

function label(message: CompactMessage): string {
  return message.meta?.label ? `${message.role} (${String(message.meta.label)})` : message.role;
}

/** Where an identifier was seen: the people's words weigh more than tool output. */
type Origin = 'text' | 'arguments' | 'result' | 'summary';
const ORIGIN_WEIGHT: Record<Origin, number> = { text: 15, arguments: 5, result: 0, summary: 10 };

interface Entity {
  text: string;
  kind: EntityKind;
  weight: number;
  origin: Origin;
  order: number;
}

/** Collects identifiers, keeping each one's first position and the weightiest place it was seen. */
class EntityCollector {
  readonly entities = new Map<string, Entity>();

  add(text: string, origin: Origin, order: number): void {
    for (const { kind, pattern, weight, group } of ENTITY_PATTERNS) {
      for (const match of text.matchAll(pattern)) {
        const value = (match[group ?? 0] ?? '').trim().replace(/[.,;:]+$/, '');
        if (value) this.#put(value, kind, weight, origin, order);
      }
    }
    if (origin === 'text' || origin === 'summary')
      for (const match of text.matchAll(BACKTICKED)) this.#put(match[1]!, 'code', 40, origin, order);
  }

  #put(text: string, kind: EntityKind, weight: number, origin: Origin, order: number): void {
    const key = text.toLowerCase();
    const known = this.entities.get(key);
    if (!known) {
      this.entities.set(key, { text, kind, weight, origin, order });
    } else if (ORIGIN_WEIGHT[origin] > ORIGIN_WEIGHT[known.origin]) {
      known.origin = origin;
    }
  }

  /** URLs, the ones the user or the agent wrote first. */
  sources(): Item[] {
    return [...this.entities.values()]
      .filter((e) => e.kind === 'url')
      .map((e) => ({ text: e.text, score: 45 + 2 * ORIGIN_WEIGHT[e.origin], order: e.order }));
  }

  /** Kinds found in `text` (for scoring sentences and tool results). */
  static kindsIn(text: string): Set<EntityKind> {
    const kinds = new Set<EntityKind>();
    for (const { kind, pattern } of ENTITY_PATTERNS) {
      pattern.lastIndex = 0;
      if (pattern.test(text)) kinds.add(kind);
      pattern.lastIndex = 0;
    }
    return kinds;
  }

  /**
   * Scored items, without identifiers contained in a longer one (a file name in its path,
   * a hash fragment in a UUID) and without repetitive counters from tool output (`93 lines`,
   * `4.21s`: the same shape with three or more values).
   */
  items(options: { skipUrls?: boolean } = {}): Item[] {
    const all = [...this.entities.values()];
    const lower = all.map((e) => e.text.toLowerCase());
    const shapes = new Map<string, number>();
    for (const e of all) {
      const shape = e.text.replace(/\d+/g, '#');
      if (shape !== e.text) shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
    }
    const out: Item[] = [];
    all.forEach((e, k) => {
      if (options.skipUrls && e.kind === 'url') return;
      const key = lower[k]!;
      if (lower.some((other, j) => j !== k && other.length > key.length && other.includes(key))) return;
      // A shape seen with many values in tool output (`93 lines`, `4.21s`) is a counter, not a fact.
      const repeats = shapes.get(e.text.replace(/\d+/g, '#')) ?? 0;
      if (repeats >= 3 && e.origin !== 'text') return;
      out.push({ text: e.text, score: e.weight + ORIGIN_WEIGHT[e.origin], order: e.order });
    });
    return out;
  }
}

interface Extracted {
  goals: Item[];
  constraints: Item[];
  decisions: Item[];
  openItems: Item[];
  entities: EntityCollector;
  toolFacts: Item[];
  ledger: Item[];
  files: Map<string, { notes: string[]; order: number; edited: boolean }>;
  sources: Item[];
}

/** Scores a sentence's identifiers: a sentence that names a ticket, id, branch or path matters more. */
function identifierBonus(text: string): number {
  for (const kind of EntityCollector.kindsIn(text))
    if (HIGH_VALUE.has(kind) || kind === 'quantity') return 10;
  return 0;
}

/** A numbered listing line, or a line dense with code punctuation. */
function looksLikeCode(line: string): boolean {
  if (/^\s*\d+[:|]\s/.test(line)) return true;
  const symbols = line.replace(/[\w\s.,'’?!-]/g, '').length;
  return symbols / line.length > 0.12;
}

type SentenceClass = 'goal' | 'constraint' | 'decision' | 'open' | undefined;

/** Puts a sentence in one section (the most specific) with its score. */
function classify(
  sentence: string,
  role: CompactMessage['role'],
  first: boolean,
): { section: SentenceClass; score: number } {
  // Tool output, and code or file listings pasted into a message, state no goal or decision.
  if (role === 'tool' || looksLikeCode(sentence)) return { section: undefined, score: 0 };
  const bonus = identifierBonus(sentence);
  if (STRONG_OPEN.test(sentence)) return { section: 'open', score: 65 + bonus };
  if (CONSTRAINT.test(sentence)) return { section: 'constraint', score: 80 + bonus };
  if (role === 'assistant' && STRONG_DECISION.test(sentence))
    return { section: 'decision', score: 70 + bonus + (RATIONALE.test(sentence) ? 10 : 0) };
  if (role === 'user' && (first || GOAL.test(sentence)))
    return { section: 'goal', score: 45 + bonus + (CRITERIA.test(sentence) ? 25 : 0) };
  if (role === 'assistant' && DECISION.test(sentence))
    return { section: 'decision', score: 12 + bonus + (RATIONALE.test(sentence) ? 10 : 0) };
  if (OPEN_ITEM.test(sentence)) return { section: 'open', score: 20 + bonus };
  return { section: undefined, score: 0 };
}

/** Splits "X because Y" into its decision and its rationale, both verbatim. */
function splitRationale(sentence: string): [string, string] | undefined {
  const match = /[\s,;]+\b(because|since|so that|in order to|to avoid|due to)\b/i.exec(sentence);
  if (!match || match.index < 12) return undefined;
  return [sentence.slice(0, match.index), sentence.slice(match.index).replace(/^[\s,;]+/, '')];
}

function pushItem(list: Item[], seen: Set<string>, item: Item): void {
  const key = item.text.toLowerCase();
  if (item.text && !seen.has(key)) {
    seen.add(key);
    list.push(item);
  }
}

function extract(messages: readonly CompactMessage[]): Extracted {
  const out: Extracted = {
    goals: [],
    constraints: [],
    decisions: [],
    openItems: [],
    entities: new EntityCollector(),
    toolFacts: [],
    ledger: [],
    files: new Map(),
    sources: [],
  };
  const seen = new Set<string>();
  const toolFacts = new Map<string, Item>();
  const results = new Map<string, string>();
  for (const message of messages)
    for (const result of message.toolResults) results.set(result.callId, result.output);
  const firstUser = messages.findIndex((m) => m.role === 'user' && m.toolResults.length === 0);
  let step = 0;
  messages.forEach((message, position) => {
    const order = position * 100;
    const recency = messages.length > 1 ? (5 * position) / (messages.length - 1) : 5;
    const text = message.text;
    out.entities.add(text, message.role === 'tool' ? 'result' : 'text', order);
    for (const call of message.toolCalls) out.entities.add(call.arguments, 'arguments', order);
    for (const result of message.toolResults) out.entities.add(result.output, 'result', order);
    const list = sentences(text);
    const isUserTurn = message.role === 'user' && message.toolResults.length === 0;
    list.forEach((sentence, k) => {
      const { section, score } = classify(sentence, message.role, isUserTurn && k === 0);
      if (!section) return;
      const item = {
        text: clip(sentence),
        // The session's first request is its task: it outranks later asks.
        score: score + (position === firstUser && section === 'goal' ? 40 : recency),
        order: order + k,
      };
      const target =
        section === 'goal'
          ? out.goals
          : section === 'constraint'
            ? out.constraints
            : section === 'decision'
              ? out.decisions
              : out.openItems;
      pushItem(target, seen, item);
    });
    for (const call of message.toolCalls) {
      step++;
      const output = results.get(call.id);
      const outcome = output === undefined ? 'no result yet' : outcomeLine(output) || '(empty result)';
      const notable =
        (output !== undefined && FAILURE.test(outcome) ? 25 : 0) +
        ([...EntityCollector.kindsIn(output ?? '')].some((k) => HIGH_VALUE.has(k)) ? 10 : 0);
      // The same call repeated (tests rerun, a file reread): its latest result stands.
      const signature = `${call.name}(${clip(call.arguments, 100)})`;
      const earlier = toolFacts.get(signature);
      if (earlier) out.toolFacts.splice(out.toolFacts.indexOf(earlier), 1);
      const fact = { text: `${signature} → ${outcome}`, score: 10 + notable + recency, order };
      toolFacts.set(signature, fact);
      out.toolFacts.push(fact);
      const rationale = list.find((s) => RATIONALE.test(s)) ?? list[0] ?? '';
      out.ledger.push({
        text: `[${step}] ${call.name} :: ${clip(rationale, 140) || 'not stated'} :: ${clip(call.arguments, 100)} :: ${outcome}`,
        score: 15 + notable + (list.some((s) => STRONG_DECISION.test(s)) ? 30 : 0) + recency,
        order: order + step,
      });
      const touched = `${call.arguments}\n${text}`.match(FILE_PATH) ?? [];
      for (const file of new Set(touched)) {
        const entry = out.files.get(file) ?? { notes: [], order, edited: false };
        const functions = [...`${call.arguments}`.matchAll(FUNCTION_NAME)]
          .map((m) => m[1] ?? m[2])
          .filter(Boolean)
          .slice(0, 4);
        const verb = CHANGE_VERB.exec(`${call.name} ${text}`)?.[0];
        if (verb) entry.edited = true;
        entry.notes.push(
          `${verb ?? call.name} via ${call.name}${functions.length ? ` (touches ${functions.join(', ')})` : ''}${output && OPEN_ITEM.test(firstLine(output)) ? `; result: ${firstLine(output)}` : ''}`,
        );
        out.files.set(file, entry);
      }
    }
    if (message.toolCalls.length === 0 && message.role === 'assistant') {
      const decision = list.find((s) => STRONG_DECISION.test(s)) ?? list.find((s) => DECISION.test(s));
      if (decision) {
        step++;
        const other = list.find((s) => RATIONALE.test(s) && s !== decision);
        const split = other ? undefined : splitRationale(decision);
        const [what, why] = split ?? [decision, other ?? 'not stated'];
        out.ledger.push({
          text: `[${step}] ${clip(what, 160)} :: ${clip(why, 160)} :: ${label(message)} message :: -`,
          score: (STRONG_DECISION.test(decision) ? 75 : 15) + recency,
          order: order + step,
        });
      }
    }
    if (message.role === 'assistant' || message.role === 'user') {
      for (const file of new Set(text.match(FILE_PATH) ?? [])) {
        const s = list.find((x) => x.includes(file) && CHANGE_VERB.test(x));
        if (s) {
          const entry = out.files.get(file) ?? { notes: [], order, edited: false };
          entry.notes.push(clip(s, 160));
          entry.edited = true;
          out.files.set(file, entry);
        }
      }
    }
  });
  out.sources = out.entities.sources();
  return out;
}

/** Parses a previous summary written by this summarizer back into sections. */
function parseSections(body: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current = 'Earlier summary';
  for (const line of body.split('\n')) {
    const heading = /^#{1,3}\s+(.+?)\s*$/.exec(line);
    if (heading) {
      current = heading[1]!;
      continue;
    }
    const item = line.replace(/^\s*[-*]\s+/, '').trim();
    if (!item || /^Note: /.test(item)) continue;
    const list = sections.get(current) ?? [];
    list.push(item);
    sections.set(current, list);
  }
  return sections;
}

/** Scores an item carried over from the previous summary, by its section and content. */
function rescore(title: string, text: string, index: number): number {
  const carry = 5;
  switch (title) {
    case 'Goals and success criteria':
    case 'Goals':
      // The oldest goals are the session's task and its criteria.
      return 50 + Math.max(0, 35 - 10 * index) + (CRITERIA.test(text) ? 25 : 0) + carry;
    case 'Constraints':
      return 80 + carry;
    case 'Key entities and identifiers':
    case 'Key entities':
    case 'Key citations': {
      const collector = new EntityCollector();
      collector.add(text, 'summary', 0);
      const found = collector.entities.get(text.toLowerCase());
      return (found ? found.weight : 40) + ORIGIN_WEIGHT.summary + carry;
    }
    case 'Decisions':
      return classify(text, 'assistant', false).score + carry;
    case 'Outstanding actions and blockers':
    case 'Open items':
      return (STRONG_OPEN.test(text) ? 65 : 20) + identifierBonus(text) + carry;
    case 'Facts from tool results':
      return 10 + (FAILURE.test(text) ? 25 : 0) + carry;
    case 'Decision log':
      return (STRONG_DECISION.test(text) ? 75 : 15) + carry;
    case 'Sources':
      return 60 + carry;
    default:
      return 55 + carry;
  }
}

function sectionsFor(strategy: string, data: Extracted): Section[] {
  const fileItems: Item[] = [...data.files.entries()].map(([file, entry]) => ({
    text: `${file}: ${[...new Set(entry.notes)].slice(-4).join('; ')}`,
    score: 50 + (entry.edited ? 15 : 0),
    order: entry.order,
  }));
  switch (strategy) {
    case 'brief':
      return [
        {
          title: 'Summary',
          cap: 8,
          items: [
            ...top(data.goals, 3),
            ...top(data.constraints, 2),
            ...top(data.decisions, 4),
            ...top(data.openItems, 3),
          ],
        },
        {
          title: 'Key citations',
          cap: 16,
          entities: true,
          items: [
            ...data.sources,
            ...data.entities.items({ skipUrls: true }).filter((e) => /[/.]|-\d|-[0-9a-f]{4}-/.test(e.text)),
          ],
        },
      ];
    case 'decision_log':
      return [
        { title: 'Goals', items: data.goals },
        { title: 'Decision log', items: data.ledger, cap: 80 },
        { title: 'Open items', items: data.openItems },
      ];
    case 'code_delta':
      return [
        { title: 'Goals', items: data.goals },
        { title: 'Code changes', items: fileItems },
        { title: 'Open items', items: data.openItems },
        { title: 'Key entities', items: data.entities.items(), entities: true, cap: MAX_ENTITIES },
      ];
    default:
      return [
        { title: 'Goals and success criteria', items: data.goals },
        { title: 'Constraints', items: data.constraints },
        {
          title: 'Key entities and identifiers',
          items: data.entities.items({ skipUrls: true }),
          entities: true,
          cap: MAX_ENTITIES,
        },
        { title: 'Decisions', items: data.decisions },
        { title: 'Outstanding actions and blockers', items: data.openItems },
        { title: 'Facts from tool results', items: data.toolFacts },
        { title: 'Sources', items: data.sources },
      ];
  }
}

/** The `n` best items of a list (ties: the later one). */
function top(items: readonly Item[], n: number): Item[] {
  return [...items].sort((a, b) => b.score - a.score || b.order - a.order).slice(0, n);
}

function render(sections: readonly Section[], note: string | undefined): string {
  const parts: string[] = [];
  if (note) parts.push(`Note: ${clip(note)}`);
  for (const section of sections) {
    if (section.items.length === 0) continue;
    const items = [...section.items].sort((a, b) => a.order - b.order);
    parts.push(`## ${section.title}\n${items.map((i) => `- ${i.text}`).join('\n')}`);
  }
  return parts.join('\n\n');
}

/**
 * The built-in summarizer: deterministic, offline, no model. It extracts, per the
 * strategy's sections, sentences and identifiers that are in the messages (goals,
 * constraints, decisions with rationale, open items, ids, file paths, URLs, branches,
 * numbers with units, tool results), merges them with the previous summary's items, and
 * keeps the most important ones that fit `maxTokens`: identifiers named by the user or the
 * agent, constraints, decisions with their rationale and stated open work come before
 * narration, repetitive counters from tool output and routine tool calls. Kept items are
 * shown in their original order. It never invents: every item is text from the input.
 *
 * @example
 * ```ts
 * const manager = new CompactManager({ model: 'gpt-4o', summarizer: new EmbeddedSummarizer() });
 * ```
 */
export class EmbeddedSummarizer implements Summarizer {
  readonly name = 'embedded';

  async summarize(request: SummarizeRequest): Promise<SummarizeResult> {
    return { text: this.summarizeSync(request), summarizer: this.name };
  }

  /** The same as {@link summarize}, synchronously. */
  summarizeSync(request: Omit<SummarizeRequest, 'sessionId'> & { sessionId?: string }): string {
    const data = extract(request.messages);
    const sections = sectionsFor(request.strategy as StrategyName, data);
    if (request.previousSummary) {
      const previous = parseSections(request.previousSummary);
      const front: Section[] = [];
      for (const [title, items] of previous) {
        let section = sections.find((s) => s.title === title);
        if (!section) {
          section = { title, items: [] };
          front.push(section);
        }
        const seen = new Set(section.items.map((i) => i.text.toLowerCase()));
        const carried = items
          .filter((text) => !seen.has(text.toLowerCase()))
          .map((text, k) => ({ text, score: rescore(title, text, k), order: -1_000_000 + k }));
        section.items = [...carried, ...section.items];
      }
      sections.unshift(...front);
    }
    for (const section of sections) {
      const cap = section.cap ?? MAX_ITEMS_PER_SECTION;
      if (section.items.length > cap) section.items = top(section.items, cap);
    }
    return fitToBudget(sections, request);
  }
}

/**
 * Keeps the highest-scoring items that fit the budget. When some do not fit, identifiers
 * already quoted in a kept sentence are dropped from the entity lists and the freed room is
 * filled again.
 */
function fitToBudget(
  sections: Section[],
  request: Pick<SummarizeRequest, 'maxTokens' | 'countTokens' | 'note'>,
): string {
  const { maxTokens, countTokens } = request;
  const limit = Math.max(1, Math.floor(maxTokens * 0.95));
  // Every section's best items come first (a summary that keeps its structure), then the
  // rest by score; long bullets pay for their length: past 20 tokens, a point per 5 tokens.
  const candidates = sections.flatMap((section, k) =>
    top(section.items, section.items.length).map((item, rank) => ({
      item,
      k,
      cost: countTokens(item.text) + 2,
      bonus: RANK_BONUS[rank] ?? 0,
    })),
  );
  const weight = (c: { item: Item; cost: number; bonus: number }) =>
    c.item.score + c.bonus - Math.max(0, c.cost - 20) / 5;
  candidates.sort((a, b) => weight(b) - weight(a) || b.item.order - a.item.order);
  const headerCost = sections.map((s) => countTokens(s.title) + 4);
  const chosen = sections.map(() => new Set<Item>());
  const dropped = new Set<Item>();
  let used = request.note ? countTokens(`Note: ${clip(request.note)}`) + 2 : 0;
  const fill = (): boolean => {
    let skipped = false;
    for (const { item, k, cost } of candidates) {
      if (chosen[k]!.has(item) || dropped.has(item)) continue;
      const extra = cost + (chosen[k]!.size === 0 ? headerCost[k]! : 0);
      if (used + extra <= limit) {
        chosen[k]!.add(item);
        used += extra;
      } else {
        skipped = true;
      }
    }
    return skipped;
  };
  if (fill()) {
    const quoted = sections
      .flatMap((s, k) => (s.entities ? [] : [...chosen[k]!].map((i) => i.text.toLowerCase())))
      .join('\n');
    sections.forEach((section, k) => {
      if (!section.entities) return;
      for (const item of [...chosen[k]!]) {
        // The section keeps at least one item, so the summary keeps its structure.
        if (chosen[k]!.size <= 1 || !quoted.includes(item.text.toLowerCase())) continue;
        chosen[k]!.delete(item);
        dropped.add(item);
        used -= countTokens(item.text) + 2 + (chosen[k]!.size === 0 ? headerCost[k]! : 0);
      }
    });
    fill();
  }
  const kept = sections.map((section, k) => ({
    ...section,
    items: section.items.filter((item) => chosen[k]!.has(item)),
  }));
  let text = render(kept, request.note);
  // The per-item estimate can be off by a few tokens: drop the weakest items until it fits.
  const weakest = candidates.filter(({ item, k }) => chosen[k]!.has(item)).reverse();
  while (countTokens(text) > maxTokens && weakest.length > 0) {
    const { item, k } = weakest.shift()!;
    kept[k]!.items = kept[k]!.items.filter((i) => i !== item);
    text = render(kept, request.note);
  }
  while (text.length > 0 && countTokens(text) > maxTokens)
    text = text.slice(0, Math.floor(text.length * 0.9));
  return text;
}
