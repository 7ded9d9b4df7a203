/** Shared shapes of the embedded summarizer's steps. */

/** Where a unit comes from: a person's words, a tool call's outcome, or the previous summary. */
export type UnitSource = 'user' | 'assistant' | 'tool' | 'summary';

/** What a tool call did, for scoring its fact line. */
export interface ToolTraits {
  /** The call changed state (create, update, cancel, refund, edit, push...). */
  stateChanging: boolean;
  /** The result reports a failure (error flag or an error line). */
  failed: boolean;
  /** An internal scratchpad call (`think`, `plan`): worth almost nothing. */
  scratch: boolean;
  /** A later call with the same signature supersedes this one. */
  superseded: boolean;
}

/**
 * One candidate line fragment of the summary: a clause of a message (verbatim) or a tool
 * fact line, with everything selection needs.
 */
export interface Unit {
  /** The text as rendered (verbatim from the input, or a tool fact line). */
  text: string;
  /** Who said it: a `Name:` speaker, a role, or the tool name for tool facts. */
  speaker: string;
  source: UnitSource;
  /** Index of its segment in the segment list. */
  segment: number;
  /** Layout position: previous summary first, then input order. */
  order: number;
  /** Distinct lowercase content words (rarity is computed over these). */
  words: string[];
  /** Set for tool fact units. */
  tool?: ToolTraits;
  /**
   * Set for excerpt units (lines of a folded tool result): they fill room no other unit can
   * use and never outrank one.
   */
  filler?: true;
  /** Value assigned by scoring (higher is kept first). */
  value: number;
}

/** A dated (or undated) stretch of the conversation; one heading in the summary. */
export interface Segment {
  /** The heading text: a date (`8 May 2023`) or a label such as `Conversation`. */
  label: string;
  /** The segment's date (UTC midnight), when it has one. */
  date?: Date;
}

/** The heading of a segment with no date. */
export const UNDATED_LABEL = 'Conversation';

/** The speaker of excerpt lines (`- excerpt: ...`), read back as filler by the next version. */
export const EXCERPT_SPEAKER = 'excerpt';

/** The heading of the key identifiers section. */
export const KEY_IDS_TITLE = 'Key entities and identifiers';

/** Each content word's rarity in the conversation (inverse document frequency), by word. */
export type WordRarities = { get(word: string): number | undefined };
