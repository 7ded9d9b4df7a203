import type { CompactMessage } from './message.js';
import type { StrategyName, SummarizeRequest, SummarizeResult, Summarizer } from './summarizer.js';

/** A section of an extractive summary. */
interface Section {
  title: string;
  /** Lower is trimmed first when the summary is over its budget. */
  priority: number;
  /** Keep the first items (oldest) rather than the latest when trimming. */
  keepOldest?: boolean;
  items: string[];
}

const MAX_SENTENCE_CHARS = 220;
const MAX_ITEMS_PER_SECTION = 40;

const GOAL =
  /\b(goal|objective|need to|needs to|want to|wants to|please|should|success criteria|so that|make sure|task is|implement|fix|build|add|create|refactor|investigate|find)\b/i;
const CONSTRAINT =
  /\b(must|must not|never|do not|don't|only|always|required|requirement|cannot|can't|at most|at least|no more than|within|deadline|budget|limit|sla|compliance|security|policy|forbidden|not allowed)\b/i;
const DECISION =
  /\b(decided|decide|will use|going with|chose|choose|chosen|instead of|we'll|i'll|let's|let me|plan is|approach|because|since|so that|the fix|root cause|turns out)\b/i;
const OPEN_ITEM =
  /\b(todo|to do|next step|next,|remaining|pending|blocked|blocker|still need|not yet|follow[- ]up|open question|unresolved|fails?|failed|failing|error|broken)\b/i;
const RATIONALE = /\b(because|since|so that|in order to|to avoid|due to)\b/i;

const ENTITY_PATTERNS: RegExp[] = [
  /\bhttps?:\/\/[^\s)\]>"'`]+/g,
  /(?:\.{1,2}\/|\/)?(?:[\w.@-]+\/)+[\w.@-]+\.[A-Za-z0-9]{1,8}\b/g,
  /\b[\w-]+\.(?:ts|tsx|js|jsx|mjs|cjs|py|md|json|ya?ml|go|rs|java|kt|rb|php|cs|cpp|c|h|sql|sh|toml|txt|css|html|ini|cfg|lock)\b/g,
  /\b[A-Z][A-Z0-9]{1,9}-\d+\b/g,
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi,
  /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/g,
  /\b(?:branch|checkout(?: -b)?|origin\/)\s*[\w][\w./-]*/g,
  /(?:^|\s)#\d{1,6}\b/g,
  /\b\d+(?:[.,]\d+)?\s?(?:ms|s|sec|seconds?|minutes?|mins?|hours?|h|days?|KB|MB|GB|TB|KiB|MiB|GiB|k|%|tokens?|req\/s|rps|qps|USD|EUR|lines?|files?)\b/g,
  /[$€£]\s?\d+(?:[.,]\d+)?[kKmM]?\b/g,
  /\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g,
  /\bv?\d+\.\d+\.\d+(?:-[\w.]+)?\b/g,
];

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

function pushUnique(list: string[], seen: Set<string>, item: string): void {
  const key = item.toLowerCase();
  if (item && !seen.has(key)) {
    seen.add(key);
    list.push(item);
  }
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim().length > 0) ?? '';
  return clip(line, 160);
}

function entitiesOf(text: string, into: string[], seen: Set<string>): void {
  for (const pattern of ENTITY_PATTERNS) {
    for (const match of text.matchAll(pattern))
      pushUnique(into, seen, match[0].trim().replace(/[.,;:]+$/, ''));
  }
}

function label(message: CompactMessage): string {
  return message.meta?.label ? `${message.role} (${String(message.meta.label)})` : message.role;
}

interface Extracted {
  goals: string[];
  constraints: string[];
  decisions: string[];
  openItems: string[];
  entities: string[];
  toolFacts: string[];
  ledger: string[];
  files: Map<string, string[]>;
  sources: string[];
}

function extract(messages: readonly CompactMessage[]): Extracted {
  const out: Extracted = {
    goals: [],
    constraints: [],
    decisions: [],
    openItems: [],
    entities: [],
    toolFacts: [],
    ledger: [],
    files: new Map(),
    sources: [],
  };
  const seen = {
    goals: new Set<string>(),
    constraints: new Set<string>(),
    decisions: new Set<string>(),
    openItems: new Set<string>(),
    entities: new Set<string>(),
    toolFacts: new Set<string>(),
    sources: new Set<string>(),
  };
  const results = new Map<string, string>();
  for (const message of messages)
    for (const result of message.toolResults) results.set(result.callId, result.output);
  let step = 0;
  for (const message of messages) {
    const text = message.text;
    const all = [
      text,
      ...message.toolCalls.map((c) => c.arguments),
      ...message.toolResults.map((r) => r.output),
    ].join('\n');
    entitiesOf(all, out.entities, seen.entities);
    for (const match of all.matchAll(/\bhttps?:\/\/[^\s)\]>"'`]+/g))
      pushUnique(out.sources, seen.sources, match[0]);
    const list = sentences(text);
    if (message.role === 'user' && message.toolResults.length === 0) {
      if (list[0]) pushUnique(out.goals, seen.goals, clip(list[0]));
      for (const s of list.slice(1)) if (GOAL.test(s)) pushUnique(out.goals, seen.goals, clip(s));
    }
    for (const s of list) {
      if (CONSTRAINT.test(s) && message.role !== 'tool')
        pushUnique(out.constraints, seen.constraints, clip(`${s}`));
      if (message.role === 'assistant' && DECISION.test(s))
        pushUnique(out.decisions, seen.decisions, clip(s));
      if (OPEN_ITEM.test(s) && message.role !== 'tool') pushUnique(out.openItems, seen.openItems, clip(s));
    }
    for (const call of message.toolCalls) {
      step++;
      const output = results.get(call.id);
      const outcome = output === undefined ? 'no result yet' : firstLine(output) || '(empty result)';
      pushUnique(out.toolFacts, seen.toolFacts, `${call.name}(${clip(call.arguments, 100)}) → ${outcome}`);
      const rationale = list.find((s) => RATIONALE.test(s)) ?? list[0] ?? '';
      out.ledger.push(
        `[${step}] ${call.name} :: ${clip(rationale, 140) || 'not stated'} :: ${clip(call.arguments, 100)} :: ${outcome}`,
      );
      const touched = `${call.arguments}\n${text}`.match(FILE_PATH) ?? [];
      for (const file of new Set(touched)) {
        const notes = out.files.get(file) ?? [];
        const functions = [...`${call.arguments}`.matchAll(FUNCTION_NAME)]
          .map((m) => m[1] ?? m[2])
          .filter(Boolean)
          .slice(0, 4);
        const verb = CHANGE_VERB.exec(`${call.name} ${text}`)?.[0] ?? call.name;
        notes.push(
          `${verb} via ${call.name}${functions.length ? ` (touches ${functions.join(', ')})` : ''}${output && OPEN_ITEM.test(firstLine(output)) ? `; result: ${firstLine(output)}` : ''}`,
        );
        out.files.set(file, notes);
      }
    }
    if (message.toolCalls.length === 0 && message.role === 'assistant') {
      const decision = list.find((s) => DECISION.test(s));
      if (decision) {
        step++;
        const rationale = list.find((s) => RATIONALE.test(s) && s !== decision) ?? 'not stated';
        out.ledger.push(
          `[${step}] ${clip(decision, 140)} :: ${clip(rationale, 140)} :: ${label(message)} message :: -`,
        );
      }
    }
    if (message.role === 'assistant' || message.role === 'user') {
      for (const file of new Set(text.match(FILE_PATH) ?? [])) {
        const s = list.find((x) => x.includes(file) && CHANGE_VERB.test(x));
        if (s) {
          const notes = out.files.get(file) ?? [];
          notes.push(clip(s, 160));
          out.files.set(file, notes);
        }
      }
    }
  }
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
    if (!item) continue;
    const list = sections.get(current) ?? [];
    list.push(item);
    sections.set(current, list);
  }
  return sections;
}

function sectionsFor(strategy: string, data: Extracted): Section[] {
  const fileLines = [...data.files.entries()].map(
    ([file, notes]) => `${file}: ${[...new Set(notes)].slice(-4).join('; ')}`,
  );
  switch (strategy) {
    case 'brief':
      return [
        {
          title: 'Summary',
          priority: 3,
          keepOldest: true,
          items: [...data.goals.slice(0, 3), ...data.decisions.slice(-5), ...data.openItems.slice(-3)],
        },
        {
          title: 'Key citations',
          priority: 2,
          items: [...data.sources, ...data.entities.filter((e) => /[/.]/.test(e))].slice(-20),
        },
      ];
    case 'decision_log':
      return [
        { title: 'Goals', priority: 4, keepOldest: true, items: data.goals },
        { title: 'Decision log', priority: 2, items: data.ledger },
        { title: 'Open items', priority: 3, items: data.openItems },
      ];
    case 'code_delta':
      return [
        { title: 'Goals', priority: 4, keepOldest: true, items: data.goals },
        { title: 'Code changes', priority: 3, items: fileLines },
        { title: 'Open items', priority: 2, items: data.openItems },
        { title: 'Key entities', priority: 1, items: data.entities },
      ];
    default:
      return [
        { title: 'Goals and success criteria', priority: 7, keepOldest: true, items: data.goals },
        { title: 'Constraints', priority: 6, keepOldest: true, items: data.constraints },
        { title: 'Key entities and identifiers', priority: 5, items: data.entities },
        { title: 'Decisions', priority: 4, items: data.decisions },
        { title: 'Outstanding actions and blockers', priority: 3, items: data.openItems },
        { title: 'Facts from tool results', priority: 2, items: data.toolFacts },
        { title: 'Sources', priority: 1, items: data.sources },
      ];
  }
}

function render(sections: readonly Section[], note: string | undefined): string {
  const parts: string[] = [];
  if (note) parts.push(`Note: ${clip(note)}`);
  for (const section of sections) {
    if (section.items.length === 0) continue;
    parts.push(`## ${section.title}\n${section.items.map((i) => `- ${i}`).join('\n')}`);
  }
  return parts.join('\n\n');
}

/**
 * The built-in summarizer: deterministic, offline, no model. It extracts, per the
 * strategy's sections, sentences and identifiers that are in the messages (goals,
 * constraints, decisions with rationale, open items, ids, file paths, URLs, branches,
 * numbers with units, tool results), merges them with the previous summary's items,
 * and trims the least important, oldest items until the summary fits `maxTokens`.
 * It never invents: every item is text from the input.
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
      for (const [title, items] of previous) {
        let section = sections.find((s) => s.title === title);
        if (!section) {
          section = { title, priority: 0, items: [] };
          sections.unshift(section);
        }
        const seen = new Set(section.items.map((i) => i.toLowerCase()));
        const merged = items.filter((i) => !seen.has(i.toLowerCase()));
        section.items = [...merged, ...section.items];
      }
    }
    for (const section of sections) {
      if (section.items.length > MAX_ITEMS_PER_SECTION) {
        section.items = section.keepOldest
          ? section.items.slice(0, MAX_ITEMS_PER_SECTION)
          : section.items.slice(-MAX_ITEMS_PER_SECTION);
      }
    }
    return fitToBudget(sections, request);
  }
}

/** Drops the least important, oldest items until the rendered summary fits. */
function fitToBudget(
  sections: Section[],
  request: Pick<SummarizeRequest, 'maxTokens' | 'countTokens' | 'note'>,
): string {
  const { maxTokens, countTokens } = request;
  // Count each item once; the rendered total is close to the sum (bullets add ~1 token each).
  const cost = sections.map((s) => s.items.map((i) => countTokens(i) + 2));
  let total = sections.reduce(
    (sum, s, k) =>
      sum + (s.items.length ? countTokens(s.title) + 3 : 0) + cost[k]!.reduce((a, b) => a + b, 0),
    0,
  );
  const byPriority = sections.map((_, k) => k).sort((a, b) => sections[a]!.priority - sections[b]!.priority);
  const limit = Math.max(1, Math.floor(maxTokens * 0.95));
  for (const k of byPriority) {
    const section = sections[k]!;
    while (total > limit && section.items.length > 1) {
      const drop = section.keepOldest ? section.items.length - 1 : 0;
      total -= cost[k]![drop]!;
      section.items.splice(drop, 1);
      cost[k]!.splice(drop, 1);
    }
  }
  let text = render(sections, request.note);
  if (countTokens(text) > maxTokens) {
    for (const k of byPriority) {
      if (countTokens(text) <= maxTokens) break;
      sections[k]!.items = [];
      text = render(sections, request.note);
    }
  }
  while (text.length > 0 && countTokens(text) > maxTokens)
    text = text.slice(0, Math.floor(text.length * 0.9));
  return text;
}
