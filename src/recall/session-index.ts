/**
 * The full-text index of one session's archive: MiniSearch over passages of every
 * artifact, kept up to date one artifact at a time (a reference saved again replaces its
 * passages).
 */
import type MiniSearch from 'minisearch';
import type { ArchivedArtifact } from '../core/archive/storage-adapter.js';
import { splitPassages } from './split-passages.js';

/** One indexed passage, as a search hit. */
export interface PassageHit {
  ref: string;
  /** Character offsets of the passage in the artifact's text. */
  start: number;
  end: number;
  /** MiniSearch's relevance score (higher is better). */
  score: number;
  /** Query terms found in the passage. */
  terms: string[];
}

interface PassageDoc {
  id: string;
  ref: string;
  start: number;
  end: number;
  text: string;
  label: string;
}

/** Terms longer than this (a run of one character, a base64 blob) are not indexed. */
const MAX_TERM_LENGTH = 64;

/** Lower-cases a term and drops the ones too long to be searched for. */
function processTerm(term: string): string | null {
  if (term.length === 0 || term.length > MAX_TERM_LENGTH) return null;
  return term.toLowerCase();
}

/** What describes an artifact besides its text (tool name, kind), indexed with a boost. */
function labelOf(artifact: ArchivedArtifact): string {
  const kind = artifact.kind.replace('_', ' ');
  return artifact.toolName ? `${artifact.toolName} ${kind}` : kind;
}

/** A fingerprint telling whether a stored artifact changed since it was indexed. */
export function artifactVersion(artifact: ArchivedArtifact): string {
  return `${artifact.createdAt}:${artifact.text.length}:${artifact.kind}`;
}

/** The MiniSearch index of one session. */
export class SessionIndex {
  readonly #search: MiniSearch<PassageDoc>;
  readonly #passageChars: number;
  /** Passage ids and version of each indexed reference. */
  readonly #refs = new Map<string, { ids: string[]; version: string }>();

  constructor(MiniSearchClass: typeof MiniSearch, passageChars: number) {
    this.#passageChars = passageChars;
    this.#search = new MiniSearchClass<PassageDoc>({
      fields: ['text', 'label'],
      // Offsets only: the text stays in the archive and is read back for the hits shown.
      storeFields: ['ref', 'start', 'end'],
      processTerm,
      searchOptions: {
        boost: { label: 2 },
        prefix: (term) => term.length >= 4,
        fuzzy: (term) => (term.length >= 6 ? 0.2 : false),
        combineWith: 'OR',
      },
    });
  }

  /** Number of artifacts indexed. */
  get size(): number {
    return this.#refs.size;
  }

  /** The version indexed for `ref`, if any. */
  versionOf(ref: string): string | undefined {
    return this.#refs.get(ref)?.version;
  }

  /** Adds an artifact, replacing the passages of an earlier one with the same reference. */
  upsert(artifact: ArchivedArtifact): void {
    const version = artifactVersion(artifact);
    const previous = this.#refs.get(artifact.ref);
    if (previous?.version === version) return;
    if (previous) for (const id of previous.ids) this.#search.discard(id);
    const label = labelOf(artifact);
    const docs = splitPassages(artifact.text, this.#passageChars).map((passage) => ({
      id: `${artifact.ref}#${passage.n}`,
      ref: artifact.ref,
      start: passage.start,
      end: passage.end,
      text: artifact.text.slice(passage.start, passage.end),
      label,
    }));
    this.#search.addAll(docs);
    this.#refs.set(artifact.ref, { ids: docs.map((doc) => doc.id), version });
  }

  /** The best passages for `query`, best first. */
  search(query: string, limit: number): PassageHit[] {
    return this.#search
      .search(query)
      .slice(0, limit)
      .map((result) => ({
        ref: String(result.ref),
        start: Number(result.start),
        end: Number(result.end),
        score: result.score,
        terms: result.terms,
      }));
  }
}
