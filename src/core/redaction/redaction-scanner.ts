import { runSteps, type Steps } from '../time-slice.js';
import type { RedactionRule } from './redaction-rules.js';
import { type Candidate, candidateLists, compileRulesSteps } from './rule-candidates.js';

/**
 * One pass over a text for many prefix-anchored rules: a single alternation of every rule's
 * trigger literals finds the candidate positions, and at each one the rules of that trigger
 * are tried as sticky regexes, leftmost match first (like one combined regex, without its
 * per-position cost). Text between candidates is never looked at twice.
 */

/** Rewrites one match: the whole match and its capture groups, in order. */
export type MatchReplacer = (match: string, groups: readonly (string | undefined)[]) => string;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One character of a trigger: itself, or `[tT]` when matched in any letter case. */
function unit(char: string, insensitive: boolean): string {
  const lower = char.toLowerCase();
  const upper = char.toUpperCase();
  return insensitive && lower !== upper ? `[${lower}${upper}]` : escapeRegExp(char);
}

interface TrieNode {
  children: Map<string, TrieNode>;
  terminal: boolean;
}

/**
 * The triggers as one prefix-factored regex (`A(?:KIA|Iza)|sk(?:-|_live_)`): the engine
 * decides on the first character once instead of trying every trigger at every position.
 * Longer triggers win over their prefixes (an exact trigger over a case-folded one that
 * starts the same way). The first character is matched in any case, so the root has one
 * branch per letter, however many triggers start with it in either case.
 */
export function triggerRegex(triggers: readonly { text: string; insensitive: boolean }[]): RegExp {
  return runSteps(triggerRegexSteps(triggers));
}

/** Triggers put in the trie between two steps of {@link triggerRegexSteps}. */
const TRIGGERS_PER_STEP = 48;

/**
 * {@link triggerRegex} in steps (the default rules' 328 triggers take 10-30 ms of cold code in
 * one piece): a step after every few triggers, after each branch of the root, and after the
 * regex's first match (V8 compiles it to code then).
 */
export function* triggerRegexSteps(
  triggers: readonly { text: string; insensitive: boolean }[],
): Steps<RegExp> {
  const root: TrieNode = { children: new Map(), terminal: false };
  let count = 0;
  for (const { text, insensitive } of triggers) {
    if (++count % TRIGGERS_PER_STEP === 0) yield;
    let node = root;
    let first = true;
    for (const char of text) {
      // The first character in any case: one branch per letter at the root (the engine tests
      // the root's branches one by one at each position); a hit in the wrong case finds no
      // candidate rule and costs one look-up.
      const key = unit(char, insensitive || first);
      first = false;
      let next = node.children.get(key);
      if (!next) {
        next = { children: new Map(), terminal: false };
        node.children.set(key, next);
      }
      node = next;
    }
    node.terminal = true;
  }
  const emit = (node: TrieNode): string => {
    // Exact branches first: where an exact trigger and a case-folded one share a start
    // (`access_token$`, `[aA][cC]...`), the longer exact one is found, and the scanner tries
    // the folded one too as its prefix.
    const children = [...node.children].sort(
      ([a], [b]) => Number(a.startsWith('[')) - Number(b.startsWith('[')),
    );
    const branches = children.map(([key, child]) => key + emit(child));
    if (branches.length === 0) return '';
    const group = branches.length === 1 ? branches[0]! : `(?:${branches.join('|')})`;
    return node.terminal ? `(?:${group})?` : group;
  };
  // The root's branches as `emit` orders them, one step each.
  const rootBranches: string[] = [];
  const rootChildren = [...root.children].sort(
    ([a], [b]) => Number(a.startsWith('[')) - Number(b.startsWith('[')),
  );
  for (const [key, child] of rootChildren) {
    rootBranches.push(key + emit(child));
    yield;
  }
  const source =
    rootBranches.length === 0
      ? ''
      : rootBranches.length === 1
        ? rootBranches[0]!
        : `(?:${rootBranches.join('|')})`;
  const regex = new RegExp(source, 'g');
  yield;
  regex.exec('');
  regex.lastIndex = 0;
  return regex;
}

/** `text` holds `literal` at `at` (in any letter case when `fold`; `literal` is lower case then). */
function holdsAt(text: string, at: number, literal: string, fold: boolean): boolean {
  if (!fold) return text.startsWith(literal, at);
  if (at + literal.length > text.length) return false;
  for (let index = 0; index < literal.length; index++) {
    let code = text.charCodeAt(at + index);
    if (code >= 65 && code <= 90) code += 32;
    if (code !== literal.charCodeAt(index)) return false;
  }
  return true;
}

const NO_GROUPS: (string | undefined)[] = [];

/** One of `needs` holds at `at`. */
function holdsAny(text: string, at: number, needs: Candidate['needs'] & {}): boolean {
  for (const need of needs) if (holdsAt(text, at, need.text, need.fold)) return true;
  return false;
}

/** The match kept at a position so far (`stop` -1: none), reused across positions. */
interface BestMatch {
  start: number;
  stop: number;
  order: number;
  whole: string;
  groups: (string | undefined)[];
}

/**
 * Tries the candidate rules of one trigger hit at `at`, in rule order, and leaves in `best`
 * the match to replace: the first rule that matches, unless a later one takes more of the
 * text (a routable GitLab token over the plain shape that stops at its `.`).
 */
function bestMatchAt(
  text: string,
  at: number,
  candidates: readonly Candidate[],
  gates: readonly ((text: string, at: number) => boolean)[],
  copied: number,
  best: BestMatch,
): void {
  best.stop = -1;
  best.order = -1;
  // The last rule whose gate refused at this position (-1: none).
  let refusedOrder = -1;
  for (let index = 0; index < candidates.length; index++) {
    const { rule, needs } = candidates[index]!;
    if (needs !== undefined && !holdsAny(text, at, needs)) continue;
    const { regex, extend, back, accept, gate, coveredBy, refusedWith } = rule;
    if (coveredBy >= 0 && coveredBy === best.order) continue;
    if (refusedWith >= 0 && refusedWith === refusedOrder) continue;
    if (gate >= 0 && !gates[gate]!(text, at)) {
      refusedOrder = rule.order;
      continue;
    }
    regex.lastIndex = at;
    const match = regex.exec(text);
    if (match === null || match[0].length === 0) continue;
    const end = at + match[0].length;
    const stop = extend ? extend(text, end) : end;
    if (stop <= best.stop) continue;
    const groups = match.slice(1);
    const start = back ? back(text, at, copied) : at;
    const whole = start === at && stop === end ? match[0] : text.slice(start, stop);
    if (accept && !accept(whole, groups, text, start)) continue;
    best.start = start;
    best.stop = stop;
    best.order = rule.order;
    best.whole = whole;
    best.groups = groups;
  }
}

/** Hears one replacement: `text.slice(start, end)` becomes `replacement` (calls in text order). */
export type MatchSink = (start: number, end: number, replacement: string) => void;

/**
 * The scanner's matching half: reports each replacement (non-overlapping, left to right)
 * instead of building the new text, so a caller can map them onto another text (the
 * unicode-escape pass maps matches in a decoded copy back to the raw text).
 */
export function createRuleMatcher(
  rules: readonly RedactionRule[],
  replace: MatchReplacer,
): (text: string, sink: MatchSink) => void {
  return runSteps(createRuleMatcherSteps(rules, replace));
}

let matchersBuilt = 0;
/** Per-text states (gates, best match, recent lists) the matchers have made: one per text with a trigger. */
let statesMade = 0;

/** Per-text states made so far (tests: a text without a trigger makes none). */
export function ruleScanStatesMade(): number {
  return statesMade;
}

/** Rule matchers built so far in the process (tests: what builds one and what does not). */
export function ruleMatchersBuilt(): number {
  return matchersBuilt;
}

/** {@link createRuleMatcher} in steps of a few milliseconds (a manager's `ready()`). */
export function* createRuleMatcherSteps(
  rules: readonly RedactionRule[],
  replace: MatchReplacer,
): Steps<(text: string, sink: MatchSink) => void> {
  matchersBuilt++;
  const compiled = yield* compileRulesSteps(rules);
  if (compiled.triggers.length === 0) return () => {};
  yield;
  const finder = yield* triggerRegexSteps(compiled.triggers);
  const candidatesOf = candidateLists(compiled);

  return (text, sink) => {
    finder.lastIndex = 0;
    let hit = finder.exec(text);
    // Most texts hold no trigger: nothing more is made for them (the gates and lists below were
    // made per text, a few hundred bytes each, on every message a compaction redacts).
    if (hit === null) return;
    statesMade++;
    const best: BestMatch = { start: 0, stop: -1, order: -1, whole: '', groups: NO_GROUPS };
    const gates = compiled.gateMakers.map((make) => make());
    let copied = 0;
    // Text dense with a few triggers (`token=a password=b secret=c ...`) asks for the same
    // lists again and again: the last four are compared as strings, not hashed into the map.
    const recentHits = ['', '', '', ''];
    const recentLists: (readonly Candidate[])[] = [[], [], [], []];
    let nextRecent = 0;
    for (; hit !== null; hit = finder.exec(text)) {
      const at = hit.index;
      const found = hit[0];
      let lastList: readonly Candidate[] | undefined;
      for (let index = 0; index < 4; index++) {
        if (recentHits[index] === found) {
          lastList = recentLists[index]!;
          break;
        }
      }
      if (lastList === undefined) {
        lastList = candidatesOf(found);
        recentHits[nextRecent] = found;
        recentLists[nextRecent] = lastList;
        nextRecent = (nextRecent + 1) & 3;
      }
      bestMatchAt(text, at, lastList, gates, copied, best);
      if (best.stop >= 0) {
        // Rules of the same hit are tried in order: only the kept match is replaced.
        sink(best.start, best.stop, replace(best.whole, best.groups));
        copied = best.stop;
        finder.lastIndex = best.stop;
      } else {
        // Triggers may overlap (`pass` inside `passpwd`): look again one character later.
        finder.lastIndex = at + 1;
      }
    }
  };
}
