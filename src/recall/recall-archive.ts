/**
 * The way back from compaction: reads what a placeholder, cut marker or summary names, and
 * searches a session's archived originals. Bound to one storage; every read is scoped to the
 * session the caller names (never to anything the model passes).
 */
import type { ArchivedArtifact, StorageAdapter } from '../core/archive/storage-adapter.js';
import { isCompactError } from '../core/errors.js';
import { isArtifactRef } from '../storage/artifact-ref.js';
import { RecallError } from './recall-error.js';
import { SessionIndex } from './session-index.js';
import { safeCut } from './split-passages.js';

/** Options of {@link RecallArchive}. */
export interface RecallOptions {
  /** Characters of one page of a recalled text. @default 6000 */
  pageChars?: number;
  /** Largest page a caller (the model) may ask for; larger requests are refused. @default 20_000 */
  maxPageChars?: number;
  /** Characters of one indexed passage (what a search hit shows). @default 800 */
  passageChars?: number;
  /** Search hits returned by default. @default 5 */
  results?: number;
  /** Most search hits a caller may ask for. @default 10 */
  maxResults?: number;
  /**
   * How a built index learns of new artifacts: `'writes'` through {@link RecallArchive.storage}
   * only (the manager writes through it; cheapest); `'list'` also lists the session's
   * artifacts before each search (another process writes the archive, e.g. the MCP server).
   * @default 'writes'
   */
  refresh?: 'writes' | 'list';
}

/** The recall defaults. */
export const DEFAULT_RECALL_OPTIONS = Object.freeze({
  pageChars: 6000,
  maxPageChars: 20_000,
  passageChars: 800,
  results: 5,
  maxResults: 10,
  refresh: 'writes' as const,
});

/** Longest query accepted, in characters. */
export const MAX_QUERY_CHARS = 500;

/** One page of an archived text. */
export interface RecallPage {
  ref: string;
  kind: ArchivedArtifact['kind'];
  toolName?: string;
  step?: number;
  /** 1-based page number and the page count at `pageChars`. */
  page: number;
  pages: number;
  pageChars: number;
  /** Character offsets of the page in the whole text, and the text's length. */
  start: number;
  end: number;
  totalChars: number;
  text: string;
}

/** One search hit: a passage of an archived text. */
export interface RecallHit {
  ref: string;
  kind: ArchivedArtifact['kind'];
  toolName?: string;
  /** Character offsets of the passage, the text's length, and the page holding the passage's start (at the default page size). */
  start: number;
  end: number;
  totalChars: number;
  page: number;
  score: number;
  text: string;
}

type Resolved = Required<RecallOptions>;

function checkOption(name: keyof RecallOptions, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`recall option ${name} must be an integer from ${min} to ${max}, got ${value}`);
  }
}

/**
 * Recall over a storage's archive.
 *
 * @example
 * ```ts
 * const recall = new RecallArchive(fsStorage({ path: '.compact/archive' }));
 * const manager = new CompactManager({ model: 'gpt-4o', storage: recall.storage });
 * await recall.read('chat-42', 'tool-3kf93jd02kd9');        // the cleared output, page 1
 * await recall.search('chat-42', 'retry budget webhook');   // best passages with their refs
 * ```
 */
export class RecallArchive {
  /** The storage to hand to the manager: the wrapped one, which also feeds built indexes. */
  readonly storage: StorageAdapter;
  readonly options: Readonly<Resolved>;
  readonly #inner: StorageAdapter;
  readonly #indexes = new Map<
    string,
    { ready: Promise<SessionIndex>; index?: SessionIndex; queued: ArchivedArtifact[] }
  >();

  constructor(storage: StorageAdapter, options: RecallOptions = {}) {
    const resolved: Resolved = { ...DEFAULT_RECALL_OPTIONS, ...options };
    checkOption('pageChars', resolved.pageChars, 100, 1_000_000);
    checkOption('maxPageChars', resolved.maxPageChars, resolved.pageChars, 1_000_000);
    checkOption('passageChars', resolved.passageChars, 100, 100_000);
    checkOption('results', resolved.results, 1, 100);
    checkOption('maxResults', resolved.maxResults, resolved.results, 100);
    if (resolved.refresh !== 'writes' && resolved.refresh !== 'list')
      throw new RangeError(
        `recall option refresh must be 'writes' or 'list', got ${String(resolved.refresh)}`,
      );
    this.options = Object.freeze(resolved);
    this.#inner = storage;
    this.storage = this.#wrap(storage);
  }

  /** True when the storage keeps originals under references. */
  get available(): boolean {
    const s = this.#inner;
    return typeof s.loadArtifact === 'function' && typeof s.listArtifacts === 'function';
  }

  /** Sessions whose search index has been built (or is being built). */
  indexedSessions(): string[] {
    return [...this.#indexes.keys()];
  }

  #wrap(storage: StorageAdapter): StorageAdapter {
    const wrapped: StorageAdapter = {
      name: storage.name,
      saveTranscript: (sessionId, transcript, step, options) =>
        storage.saveTranscript(sessionId, transcript, step, options),
      saveSummary: (sessionId, summary, step, options) =>
        storage.saveSummary(sessionId, summary, step, options),
      saveEvent: (sessionId, event, options) => storage.saveEvent(sessionId, event, options),
    };
    if (storage.saveArtifact) {
      const save = storage.saveArtifact.bind(storage);
      wrapped.saveArtifact = async (sessionId, artifact, options) => {
        const location = await save(sessionId, artifact, options);
        this.#written(sessionId, artifact);
        return location;
      };
    }
    if (storage.loadArtifact) wrapped.loadArtifact = storage.loadArtifact.bind(storage);
    if (storage.listArtifacts) wrapped.listArtifacts = storage.listArtifacts.bind(storage);
    // The version floor (docs/sessions.md): without it a restarted process numbers v1 again.
    if (storage.latestSummaryStep) wrapped.latestSummaryStep = storage.latestSummaryStep.bind(storage);
    if (storage.close) wrapped.close = storage.close.bind(storage);
    return wrapped;
  }

  /** Feeds a written artifact to its session's index, if one was built (else nothing: no index until the first search). */
  #written(sessionId: string, artifact: ArchivedArtifact): void {
    const entry = this.#indexes.get(sessionId);
    if (!entry) return;
    if (entry.index) entry.index.upsert(artifact);
    else entry.queued.push(artifact);
  }

  #storage(): Required<Pick<StorageAdapter, 'loadArtifact' | 'listArtifacts'>> {
    const { loadArtifact, listArtifacts } = this.#inner;
    if (!loadArtifact || !listArtifacts) {
      throw new RecallError(
        'recall_unavailable',
        `this archive (${this.#inner.name}) keeps no originals, so nothing can be recalled`,
      );
    }
    return { loadArtifact: loadArtifact.bind(this.#inner), listArtifacts: listArtifacts.bind(this.#inner) };
  }

  async #load(sessionId: string, ref: string): Promise<ArchivedArtifact> {
    let artifact: ArchivedArtifact | undefined;
    try {
      artifact = await this.#storage().loadArtifact(sessionId, ref);
    } catch (error) {
      if (error instanceof RecallError) throw error;
      if (isCompactError(error, 'corrupt_state')) {
        throw new RecallError(
          'archive_unreadable',
          `the text archived under ref "${ref}" is unreadable (corrupt or truncated); search with "query" for other archived text`,
          { field: 'ref', cause: error },
        );
      }
      throw new RecallError('archive_unreadable', 'the archive could not be read; try again later', {
        cause: error,
      });
    }
    // Adapters check this too; a third-party one might not.
    if (!artifact || artifact.ref !== ref || artifact.sessionId !== sessionId) {
      throw new RecallError(
        'unknown_ref',
        `nothing is archived under ref "${ref}" in this conversation; pass a ref exactly as a placeholder, cut marker or summary names it, or search with "query"`,
        { field: 'ref' },
      );
    }
    return artifact;
  }

  /**
   * Page `page` (1-based) of the text archived under `ref` in `sessionId`. Throws
   * {@link RecallError} for a malformed or unknown reference, an oversized page or a page
   * past the end.
   */
  async read(
    sessionId: string,
    ref: string,
    page = 1,
    pageChars = this.options.pageChars,
  ): Promise<RecallPage> {
    if (!isArtifactRef(ref)) {
      throw new RecallError(
        'invalid_ref',
        `"${String(ref).slice(0, 80)}" is not a recall ref: refs look like "tool-3kf93jd02kd9", "args-…", "cut-…" or "sum-v2" (no paths)`,
        { field: 'ref' },
      );
    }
    if (!Number.isInteger(pageChars) || pageChars < 100) {
      throw new RecallError('invalid_input', 'page_chars must be an integer of at least 100', {
        field: 'page_chars',
      });
    }
    if (pageChars > this.options.maxPageChars) {
      throw new RecallError(
        'page_too_large',
        `page_chars ${pageChars} is over the limit of ${this.options.maxPageChars}; ask for smaller pages and read them one by one`,
        { field: 'page_chars' },
      );
    }
    if (!Number.isInteger(page) || page < 1) {
      throw new RecallError('page_out_of_range', 'page must be an integer of at least 1', { field: 'page' });
    }
    const artifact = await this.#load(sessionId, ref);
    const total = artifact.text.length;
    const pages = Math.max(1, Math.ceil(total / pageChars));
    if (page > pages) {
      throw new RecallError(
        'page_out_of_range',
        `ref "${ref}" has ${pages} page${pages === 1 ? '' : 's'} of ${pageChars} chars; page ${page} does not exist`,
        { field: 'page' },
      );
    }
    const start = safeCut(artifact.text, (page - 1) * pageChars);
    const end = safeCut(artifact.text, Math.min(total, page * pageChars));
    const out: RecallPage = {
      ref,
      kind: artifact.kind,
      page,
      pages,
      pageChars,
      start,
      end,
      totalChars: total,
      text: artifact.text.slice(start, end),
    };
    if (artifact.toolName !== undefined) out.toolName = artifact.toolName;
    if (artifact.step !== undefined) out.step = artifact.step;
    return out;
  }

  /** The session's index, built on first use from the archive, then kept up to date. */
  async #index(sessionId: string): Promise<SessionIndex> {
    let entry = this.#indexes.get(sessionId);
    if (!entry) {
      const queued: ArchivedArtifact[] = [];
      const ready = this.#build(sessionId, queued);
      entry = { ready, queued };
      this.#indexes.set(sessionId, entry);
      const current = entry;
      ready.then(
        (index) => {
          current.index = index;
        },
        () => {
          if (this.#indexes.get(sessionId) === current) this.#indexes.delete(sessionId);
        },
      );
      return ready;
    }
    const index = await entry.ready;
    if (this.options.refresh === 'list') {
      for (const artifact of await this.#list(sessionId)) index.upsert(artifact);
    }
    return index;
  }

  async #build(sessionId: string, queued: ArchivedArtifact[]): Promise<SessionIndex> {
    const { default: MiniSearch } = await import('minisearch');
    const artifacts = await this.#list(sessionId);
    const index = new SessionIndex(MiniSearch, this.options.passageChars);
    for (const artifact of artifacts) index.upsert(artifact);
    // Written while the list was read: newer than what the list may hold.
    for (const artifact of queued.splice(0)) index.upsert(artifact);
    return index;
  }

  async #list(sessionId: string): Promise<ArchivedArtifact[]> {
    try {
      const listed = await this.#storage().listArtifacts(sessionId);
      return listed.filter((artifact) => artifact.sessionId === sessionId && isArtifactRef(artifact.ref));
    } catch (error) {
      if (error instanceof RecallError) throw error;
      throw new RecallError('archive_unreadable', 'the archive could not be read; try again later', {
        cause: error,
      });
    }
  }

  /**
   * The passages of `sessionId`'s archive that best match `query`, best first, each with
   * the reference to read it whole. Builds the session's index on first use.
   */
  async search(sessionId: string, query: string, limit = this.options.results): Promise<RecallHit[]> {
    if (typeof query !== 'string' || query.trim() === '') {
      throw new RecallError('invalid_input', 'query must be a non-empty string', { field: 'query' });
    }
    if (query.length > MAX_QUERY_CHARS) {
      throw new RecallError('invalid_input', `query must be at most ${MAX_QUERY_CHARS} characters`, {
        field: 'query',
      });
    }
    if (!Number.isInteger(limit) || limit < 1 || limit > this.options.maxResults) {
      throw new RecallError(
        'invalid_input',
        `limit must be an integer from 1 to ${this.options.maxResults}`,
        {
          field: 'limit',
        },
      );
    }
    const index = await this.#index(sessionId);
    const hits: RecallHit[] = [];
    const texts = new Map<string, ArchivedArtifact | undefined>();
    for (const hit of index.search(query, limit)) {
      if (!texts.has(hit.ref))
        texts.set(hit.ref, await this.#load(sessionId, hit.ref).catch(() => undefined));
      const artifact = texts.get(hit.ref);
      if (!artifact) continue;
      const out: RecallHit = {
        ref: hit.ref,
        kind: artifact.kind,
        start: hit.start,
        end: hit.end,
        totalChars: artifact.text.length,
        page: Math.floor(hit.start / this.options.pageChars) + 1,
        score: hit.score,
        text: artifact.text.slice(hit.start, hit.end),
      };
      if (artifact.toolName !== undefined) out.toolName = artifact.toolName;
      hits.push(out);
    }
    return hits;
  }
}
