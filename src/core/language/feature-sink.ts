/**
 * Where the instruction model's features go (instruction-features.ts): each feature is the FNV-1a
 * hash of a string such as `b:prev word`, hashed in parts (its tag, then each part after a space)
 * and never joined, masked into the buckets; each bucket is kept once a sentence, in the order
 * first seen. One sink a view (plain, lexical, both), made once and reused, so collecting a
 * sentence's features makes no function and no feature string.
 */

/** Number of hash buckets: the weights array's length (a power of two). */
export const FEATURE_BUCKETS = 1 << 15;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a continued over `text`. */
export function mix(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}
/** FNV-1a continued over a space and `text`: the next part of a feature. */
function part(hash: number, text: string): number {
  let h = Math.imul(hash ^ 32, FNV_PRIME);
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}

/** The hash a feature string starting with `P|` starts from: the same feature said to a person. */
const PERSON_OFFSET = mix(FNV_OFFSET, 'P|');

/** A feature's tag (`b:`, `f2:`), hashed once: as said, and said to a person (`P|b:`). */
export interface FeatureTag {
  readonly hash: number;
  readonly personHash: number;
}
/** The tag `text`, hashed. */
export function featureTag(text: string): FeatureTag {
  return { hash: mix(FNV_OFFSET, text), personHash: mix(PERSON_OFFSET, text) };
}

/** Which views a sink writes to. */
export const PLAIN_VIEW = 1;
export const LEXICAL_VIEW = 2;

/** One sentence's buckets of both views, a stamp per bucket instead of a set per sentence. */
class Collected {
  readonly plainStamps = new Uint32Array(FEATURE_BUCKETS);
  readonly lexicalStamps = new Uint32Array(FEATURE_BUCKETS);
  plain: number[] = [];
  lexical: number[] = [];
  stamp = 0;
  person = false;
  /** The views the sentence is read in. */
  views = 0;

  /** Starts a sentence said to a person or not, read in `views`. */
  start(person: boolean, views: number): void {
    this.stamp = this.stamp === 0xffffffff ? 1 : this.stamp + 1;
    if (this.stamp === 1) {
      this.plainStamps.fill(0);
      this.lexicalStamps.fill(0);
    }
    this.plain = [];
    this.lexical = [];
    this.person = person;
    this.views = views;
  }

  add(views: number, hash: number): void {
    const bucket = (hash >>> 0) & (FEATURE_BUCKETS - 1);
    if (views & PLAIN_VIEW && this.plainStamps[bucket] !== this.stamp) {
      this.plainStamps[bucket] = this.stamp;
      this.plain.push(bucket);
    }
    if (views & LEXICAL_VIEW && this.lexicalStamps[bucket] !== this.stamp) {
      this.lexicalStamps[bucket] = this.stamp;
      this.lexical.push(bucket);
    }
  }
}

/** Adds features to the views it is for (those of them the sentence is read in). */
export class FeatureSink {
  constructor(
    private readonly collected: Collected,
    private readonly views: number,
  ) {}

  /** Whether the sentence is read in this sink's view (a one-view sink of a view not read writes nothing). */
  get reads(): boolean {
    return (this.collected.views & this.views) !== 0;
  }

  /** Adds the feature `tag a b c` (`twin`: again with `P|` when said to a person). */
  add(twin: boolean, tag: FeatureTag, a: string, b?: string, c?: string): void {
    const views = this.collected.views & this.views;
    if (views === 0) return;
    let hash = mix(tag.hash, a);
    if (b !== undefined) hash = part(hash, b);
    if (c !== undefined) hash = part(hash, c);
    this.collected.add(views, hash);
    if (twin && this.collected.person) {
      let twinHash = mix(tag.personHash, a);
      if (b !== undefined) twinHash = part(twinHash, b);
      if (c !== undefined) twinHash = part(twinHash, c);
      this.collected.add(views, twinHash);
    }
  }

  /** Adds the feature `tag a` where `a` is the last `n` characters of `word`, not sliced. */
  addSuffix(twin: boolean, tag: FeatureTag, word: string, n: number): void {
    const views = this.collected.views & this.views;
    if (views === 0) return;
    const from = Math.max(0, word.length - n);
    let hash = tag.hash;
    for (let i = from; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), FNV_PRIME);
    this.collected.add(views, hash);
    if (twin && this.collected.person) {
      let twinHash = tag.personHash;
      for (let i = from; i < word.length; i++) twinHash = Math.imul(twinHash ^ word.charCodeAt(i), FNV_PRIME);
      this.collected.add(views, twinHash);
    }
  }
}

const collected = new Collected();
/** The sinks: both views, the plain view alone, the lexical view alone. */
export const sinks = {
  both: new FeatureSink(collected, PLAIN_VIEW | LEXICAL_VIEW),
  plain: new FeatureSink(collected, PLAIN_VIEW),
  lexical: new FeatureSink(collected, LEXICAL_VIEW),
};

/** Starts collecting a sentence's features, said to a person or not, in `views`. */
export function startSentence(person: boolean, views: number): void {
  collected.start(person, views);
}

/** The buckets collected since {@link startSentence}, each view's in the order first seen. */
export function collectedBuckets(): [plain: number[], lexical: number[]] {
  return [collected.plain, collected.lexical];
}
