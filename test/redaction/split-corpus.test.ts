import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MESSAGE_CODECS } from '../../src/core/messages/formats/detect-format.js';
import { redactMessages } from '../../src/core/preflight/cascade/summarize-remainder.js';
import { artifactsOf } from '../../src/core/preflight/outcome/archive-originals.js';
import { getDefaultRedactor, redactDeep } from '../../src/core/redaction/redactor.js';
import { crossingSeams, redactJoined } from '../../src/core/redaction/split-secrets.js';
import { type CorpusSample, gitleaksCorpus, outcome } from './support/gitleaks-corpus.js';
import { leakFinder } from './support/secret-shapes.js';

/**
 * secrets-88: each secret of the gitleaks corpus the redactor catches whole, split over two
 * messages at every position (plain; inside JSON a tool printed, escaped; with look-alike
 * letters; URL-encoded at sampled positions): no run of 8 of its characters (raw,
 * JSON-escaped, URL-encoded, base64) is in the summarizer's parsed messages, the wire array
 * redacted deep, or the archive's transcript (`sum-vN`). On main 3 rules leaked in the plain
 * shape: a Sentry org token (the head's own redaction caught its JWT part and the cut kept what
 * it left), a Sidekiq URL's user (likewise in the tail) and a GitLab routable token (the seam
 * window ended inside its `.2yclr50mo` suffix).
 */

const redact = getDefaultRedactor();
const codec = MESSAGE_CODECS['openai-chat'];
const { samples } = gitleaksCorpus(1);

/** The corpus' log lines the redactor catches whole, as the match gitleaks' rule found. */
const planted = samples
  .filter(
    (sample) =>
      sample.context === 'log' &&
      sample.kind === 'standalone' &&
      sample.secret.length >= 16 &&
      !/\s/.test(sample.secret) &&
      outcome(sample, redact(sample.text)) === 'caught',
  )
  .map((sample) => ({
    sample,
    shown: sample.text.slice(sample.text.indexOf('using ') + 6, sample.text.lastIndexOf(' for upload')),
  }));

/** Letters written with a Cyrillic look-alike, every other one. */
const ALIKE: Record<string, string> = {
  a: 'а',
  e: 'е',
  o: 'о',
  p: 'р',
  c: 'с',
  x: 'х',
  y: 'у',
  A: 'А',
  B: 'В',
  E: 'Е',
  K: 'К',
  M: 'М',
  H: 'Н',
  O: 'О',
  P: 'Р',
  C: 'С',
  T: 'Т',
  X: 'Х',
  i: 'і',
  s: 'ѕ',
};
function lookAlike(text: string): string {
  let count = 0;
  return text.replace(/[a-zA-Z]/g, (char) => (ALIKE[char] && count++ % 2 === 0 ? ALIKE[char]! : char));
}

/** Where runs of 8 of the secret leave: the summarizer's parsed texts, the wire array, `sum-vN`. */
async function leaks(raws: Record<string, unknown>[], secret: string): Promise<string[]> {
  const find = leakFinder([{ kind: 'secret', secret, text: secret }], 8);
  const items = raws.map((raw, index) => ({
    entry: { parsed: codec.parse(raw, index) },
    id: `m${index}`,
    index,
  }));
  const parsed = items.map((item) => ({ ...item.entry.parsed, id: item.id }));
  const summarizer = await redactMessages(parsed as never, redact);
  const cascade = { rewrites: [], folded: items, summary: { version: 1 } };
  const archive = artifactsOf(cascade as never, 1, items as never).map((artifact) =>
    redactJoined(artifact.text, crossingSeams(artifact.seams ?? [], redact), redact),
  );
  const outputs: Record<string, string> = {
    summarizer: JSON.stringify(summarizer.map((message) => [message.text, message.toolResults])),
    wire: JSON.stringify(redactDeep(raws, redact)),
    archive: archive.join('\n'),
  };
  return Object.entries(outputs).flatMap(([sink, text]) => find(text).map((leak) => `${sink}: ${leak}`));
}

/** Two user turns: `use <left>` and `<right> for upload`. */
const inTwoTurns = (left: string, right: string) => [
  { role: 'user', content: 'deploy the service.' },
  { role: 'user', content: `use ${left}` },
  { role: 'user', content: `${right} for upload` },
  { role: 'user', content: 'thanks' },
];

/** A tool's JSON output streamed into two results: `{"out": "using <left` and `right>"}`. */
const inToolJson = (left: string, right: string) => [
  { role: 'user', content: 'read the config.' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'call_1', content: JSON.stringify({ out: `using ${left}` }).slice(0, -2) },
  { role: 'tool', tool_call_id: 'call_1', content: `${JSON.stringify(right).slice(1)}}` },
];

/** Every split of each planted secret by `shape`, with what leaked, for the first split of a rule that leaks. */
async function everySplit(
  shape: (left: string, right: string) => Record<string, unknown>[],
  form: (text: string) => string = (text) => text,
): Promise<string[]> {
  const failures: string[] = [];
  for (const { sample, shown } of planted) {
    const secret = form(sample.secret);
    const text = form(shown);
    const at = text.indexOf(secret);
    for (let cut = at + 1; cut < at + secret.length; cut++) {
      const found = await leaks(shape(text.slice(0, cut), text.slice(cut)), secret);
      if (found.length > 0) {
        failures.push(`${sample.rule} cut at ${cut - at}/${secret.length}: ${found[0]}`);
        break;
      }
    }
  }
  return failures;
}

describe('a gitleaks corpus secret split over two messages at every position', () => {
  it('holds over a hundred caught secrets, split (the test can fail)', async () => {
    expect(planted.length).toBeGreaterThan(100);
    const { sample, shown } = planted[0]!;
    const cut = shown.indexOf(sample.secret) + 8;
    const raws = inTwoTurns(shown.slice(0, cut), shown.slice(cut));
    const find = leakFinder([{ kind: 'secret', secret: sample.secret, text: sample.text }], 8);
    expect(find(JSON.stringify(raws.map((raw) => redact(String(raw.content)))))).not.toEqual([]);
  });

  it('in two user turns', async () => {
    expect(await everySplit(inTwoTurns)).toEqual([]);
  }, 120_000);

  it('in a JSON output streamed into two tool results', async () => {
    expect(await everySplit(inToolJson)).toEqual([]);
  }, 120_000);

  it('with look-alike letters', async () => {
    const caught = planted.filter(({ sample }) => {
      const secret = lookAlike(sample.secret);
      const text = sample.text.replace(sample.secret, secret);
      return outcome({ ...sample, secret, text } as CorpusSample, redact(text)) === 'caught';
    });
    expect(caught.length).toBe(planted.length);
    expect(await everySplit(inTwoTurns, lookAlike)).toEqual([]);
  }, 120_000);

  it('URL-encoded in a query, at sampled positions', async () => {
    // A secret the redactor catches URL-encoded whole (not a `'secret_key' => "..."` line, nor
    // a key with a `\t` written out: `%5Ct` is read as an escape and ends the match).
    const encoded = planted.filter(({ sample, shown }) => {
      const find = leakFinder([{ kind: 'secret', secret: sample.secret, text: sample.text }], 8);
      return find(redact(`GET /upload?v=${encodeURIComponent(shown)}&x=1`)).length === 0;
    });
    expect(encoded.length).toBeGreaterThan(100);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...encoded),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async ({ sample, shown }, where) => {
          const text = encodeURIComponent(shown);
          const secret = encodeURIComponent(sample.secret);
          const cut = text.indexOf(secret) + 1 + Math.floor(where * (secret.length - 1));
          const raws = inTwoTurns(`GET /upload?v=${text.slice(0, cut)}`, `${text.slice(cut)}&x=1`);
          expect(await leaks(raws, sample.secret)).toEqual([]);
        },
      ),
      { numRuns: 300, seed: 88 },
    );
  }, 120_000);

  // Not caught yet (bench/notes/secrets-88.md, "What is left"): each seam is read between two
  // neighbouring messages only, and tool-call arguments are never read across calls. Todos,
  // not passes: they name the two shapes the redactor still misses.
  it.todo(
    'in three messages whose middle one completes no match with either neighbour (not caught: seams are read between two messages only)',
  );
  it.todo('in the arguments of two tool calls (not caught: arguments are not read across calls)');
});
