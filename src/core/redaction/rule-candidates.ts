import { runSteps, type Steps } from '../time-slice.js';
import type { RedactionRule } from './redaction-rules.js';

/**
 * The scanner's rules compiled for one pass: each rule as a sticky regex keyed by its trigger
 * literals (exact, or folded to lower case), and for each trigger hit the rules to try there.
 */

export interface StickyRule {
  readonly order: number;
  readonly regex: RegExp;
  readonly extend: ((text: string, end: number) => number) | undefined;
  readonly back: ((text: string, start: number, floor: number) => number) | undefined;
  readonly accept: RedactionRule['accept'];
  /** Index of the rule's gate in a scan's gates, or -1. */
  readonly gate: number;
  /** The order of the rule that covers this one ({@link RedactionRule.coveredBy}), or -1. */
  readonly coveredBy: number;
  /** The order of the rule whose gate refuses for this one too ({@link RedactionRule.refusedWith}), or -1. */
  readonly refusedWith: number;
}

/**
 * The extension of a match through a character class, as a plain loop (a lookup table for
 * ASCII): linear, whatever the length, and no regex backtrack stack.
 */
function extender(charClass: string): (text: string, end: number) => number {
  const test = new RegExp(`^${charClass}$`);
  // Built at the first extension, before any answer (a manager's construction compiled 156
  // classes' tables at once, most of them never used: issue 47).
  let ascii: Uint8Array | undefined;
  const table = () => {
    ascii = new Uint8Array(128);
    for (let code = 0; code < 128; code++) ascii[code] = test.test(String.fromCharCode(code)) ? 1 : 0;
    return ascii;
  };
  const inClass = (code: number) =>
    code < 128 ? (ascii ?? table())[code] === 1 : test.test(String.fromCharCode(code));
  return (text, end) => {
    if (end === 0 || !inClass(text.charCodeAt(end - 1))) return end;
    let at = end;
    while (at < text.length && inClass(text.charCodeAt(at))) at++;
    return at;
  };
}

/**
 * The extension of a match backwards through a character class, at most `max` characters and
 * never into text already replaced (`floor`): a key whose recognizable part sits in its middle
 * (`<32 hex>-us6`, `<14>.atlasv1.`) is replaced whole.
 */
function backExtender(
  charClass: string,
  max: number,
): (text: string, start: number, floor: number) => number {
  const test = new RegExp(`^${charClass}$`);
  return (text, start, floor) => {
    const limit = Math.max(floor, start - max);
    let at = start;
    while (at > limit && test.test(text[at - 1]!)) at--;
    return at;
  };
}

/** Compiles a rule pattern (leading `(?i)` honoured) as a sticky regex. */
function sticky(pattern: string): RegExp {
  return pattern.startsWith('(?i)') ? new RegExp(pattern.slice(4), 'iy') : new RegExp(pattern, 'y');
}

/** A rule to try at a trigger, and the longer triggers one of which must be there, if any. */
export interface Candidate {
  readonly rule: StickyRule;
  readonly needs: readonly { readonly text: string; readonly fold: boolean }[] | undefined;
}

/** The rules by trigger, the triggers for the finder, and the gates the rules share. */
export interface CompiledRules {
  readonly exact: ReadonlyMap<string, readonly StickyRule[]>;
  readonly folded: ReadonlyMap<string, readonly StickyRule[]>;
  readonly triggers: readonly { text: string; insensitive: boolean }[];
  readonly gateMakers: readonly (() => (text: string, at: number) => boolean)[];
}

/** Compiles `rules` (their order is their priority) and indexes them by trigger. */
export function compileRules(rules: readonly RedactionRule[]): CompiledRules {
  return runSteps(compileRulesSteps(rules));
}

/** Rules compiled between two steps of {@link compileRulesSteps}. */
const RULES_PER_STEP = 48;

/** {@link compileRules} in steps: a step after every few rules. */
export function* compileRulesSteps(rules: readonly RedactionRule[]): Steps<CompiledRules> {
  const exact = new Map<string, StickyRule[]>();
  const folded = new Map<string, StickyRule[]>();
  const triggers: { text: string; insensitive: boolean }[] = [];
  const gateMakers: (() => (text: string, at: number) => boolean)[] = [];
  const gateIndex = (make: () => (text: string, at: number) => boolean) => {
    const known = gateMakers.indexOf(make);
    return known >= 0 ? known : gateMakers.push(make) - 1;
  };
  // Rules that extend through the same class share one extender (156 rules, 50 classes).
  const extenders = new Map<string, (text: string, end: number) => number>();
  const extenderOf = (charClass: string) => {
    let made = extenders.get(charClass);
    if (made === undefined) {
      made = extender(charClass);
      extenders.set(charClass, made);
    }
    return made;
  };
  for (const [order, rule] of rules.entries()) {
    if (order > 0 && order % RULES_PER_STEP === 0) yield;
    const compiled: StickyRule = {
      order,
      regex: sticky(rule.pattern),
      extend: rule.extend ? extenderOf(rule.extend) : undefined,
      back: rule.extendBack ? backExtender(rule.extendBack.chars, rule.extendBack.max) : undefined,
      accept: rule.accept,
      // Rules that share a gate (the URL rules' `@`) share its state in a scan: one search.
      gate: rule.gate ? gateIndex(rule.gate) : -1,
      coveredBy: rule.coveredBy ? rules.findIndex(({ name }) => name === rule.coveredBy) : -1,
      refusedWith: rule.refusedWith ? rules.findIndex(({ name }) => name === rule.refusedWith) : -1,
    };
    const insensitive = rule.pattern.startsWith('(?i)') || rule.foldTriggers === true;
    for (const trigger of rule.triggers) {
      const key = insensitive ? trigger.toLowerCase() : trigger;
      const map = insensitive ? folded : exact;
      const list = map.get(key);
      if (list) list.push(compiled);
      else {
        map.set(key, [compiled]);
        triggers.push({ text: trigger, insensitive });
      }
    }
  }
  return { exact, folded, triggers, gateMakers };
}

/**
 * The rules to try at a hit of the trigger finder, memoized per hit text.
 *The finder reports the longest trigger at a position; the rules of every shorter trigger
 *that is a prefix of it (`pass` under `password`, a case-folded `secret` under an exact
 *`secret_`) are candidates too, in rule order.
 */
export function candidateLists({ exact, folded }: CompiledRules): (hit: string) => readonly Candidate[] {
  const byHit = new Map<string, readonly Candidate[]>();
  return (hit: string): readonly Candidate[] => {
    let list = byHit.get(hit);
    if (list === undefined) {
      // A rule found by a trigger the hit ends (or is) is tried as is; one found only by a
      // longer trigger that the hit starts is tried where the text holds that trigger.
      const sure = new Set<StickyRule>();
      for (let length = 1; length <= hit.length; length++) {
        const prefix = hit.slice(0, length);
        for (const rule of exact.get(prefix) ?? []) sure.add(rule);
        for (const rule of folded.get(prefix.toLowerCase()) ?? []) sure.add(rule);
      }
      // The finder's alternation stops at the first trigger it completes (an exact `eyJ`
      // before a folded `eyjrijoi`): a longer trigger that the hit starts is a candidate too
      // (its sticky regex checks the rest).
      const longer = new Map<StickyRule, { text: string; fold: boolean }[]>();
      const lower = hit.toLowerCase();
      const add = (rule: StickyRule, text: string, fold: boolean) => {
        if (sure.has(rule)) return;
        const needs = longer.get(rule) ?? [];
        needs.push({ text, fold });
        longer.set(rule, needs);
      };
      for (const [trigger, rules] of exact) {
        if (trigger.length > hit.length && trigger.startsWith(hit))
          for (const rule of rules) add(rule, trigger, false);
      }
      for (const [trigger, rules] of folded) {
        if (trigger.length > hit.length && trigger.startsWith(lower))
          for (const rule of rules) add(rule, trigger, true);
      }
      list = [
        ...[...sure].map((rule) => ({ rule, needs: undefined })),
        ...[...longer].map(([rule, needs]) => ({ rule, needs })),
      ].sort((a, b) => a.rule.order - b.rule.order);
      if (byHit.size < 4096) byHit.set(hit, list);
    }
    return list;
  };
}
