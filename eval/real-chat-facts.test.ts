import { describe, expect, it } from 'vitest';
import {
  answerable,
  formatRatioSpread,
  fromEvidence,
  heldAt,
  isSmallTalk,
  LOCOMO_SETS,
  loadRealChat,
  REAL_CHAT_SMALL_TALK_TARGET,
  readLine,
  runRealChats,
  summarySentences,
  totalRuns,
  turnSequence,
} from './real-chat-facts.js';

/**
 * Retained / same-size window on the held-out chats; issue 45's goal (4x) is not met. Counted
 * in lines from the answers' own evidence turns (see eval/real-chat-facts.ts): 2.7x at 1/8
 * (33.0% against 12.1%, measured again on this commit; 2.6x and 31.6% when this was first
 * written; 30.6% against 11.7% before a heading in the year of the one before it omitted the
 * year; 2.3x before a shared photo's caption was a unit of its own). Dated events counted
 * double whatever their date gave 2.9x (34.0%) here once but cost the generated noisy personal
 * chats of eval:fidelity a third of their facts (rolling 1/8: 60.0% to 38.3%), so they are not.
 * A line valued by its odds of holding an asked-about fact (a logistic model of its names,
 * numbers, rare words, "named / called", fitted on the tuning chats) gave 31.1% and 2.8x here
 * and 34.1% and 4.3x on the tuning chats, but cost the generated personal chats of
 * eval:fidelity 8 of 60 facts rolling at 1/16 and 8 direct at 1/8 (their facts are of other
 * shapes): not kept.
 *
 * The measure is fair to the window (`npx tsx eval/real-chat-fill.ts --set held-out|tune`, at
 * 1/8): the window is the token size of the whole last request (pinned, summary, recent
 * turns), not of the context window. Each compaction fills its target (tokensAfter / target
 * 102.5% held out, 102.4-104.7% tune) and each summary its limit (95.1-96.7%; the limit is
 * 64-77% of the target, about 1,000 tokens, steady from round to round: 1,024-1,087 on
 * locomo-42). The last request fills 72-85% of the context window because the target is half
 * of it and turns are appended until the trigger (85%); the summary is 41-61% of it. No room
 * is left unused that filling would give to facts: the informative units alone filling the
 * summary's last 4% (the agents' exact fill, restricted to units carrying information) gave
 * tune mean 34.7% (4.39x) against 34.4% (4.58x). Choosing is the limit: an oracle taking each
 * answer's shortest clause fits every answer one clause holds (389 tune, 177 held-out) in
 * 1/16 of the chat (`eval/real-chat-ranks.ts`), where the best clauses by value per token hold
 * an answer in 32.0% (tune) and 23.6% (held-out) of cases.
 *
 * The speakers' own names are no names between people (score-units.ts' speakerNames: "Agreed,
 * Mel!" took 3x as a named clause and Mel's rarity): held-out mean over 1/7.8, 1/8 and 1/8.2
 * 31.4% -> 32.5% and 2.90x -> 3.06x (at 1/8 33.5% -> 34.0%, 2.9x), tune mean 34.4% -> 35.1%
 * and 4.58x -> 4.88x (at 1/8 34.8% -> 36.2%, 3.8x -> 4.1x). Tried on the tuning chats and not
 * kept (within the swing): a clause naming the listener anywhere ("you", "your") 0.5x or 0.3x
 * (33.6%, 34.4% mean; value per token's best clauses 28.5% -> 29.0% hold an answer), and with
 * the informative exact fill and the names 35.6% (4.69x) tune, 32.7% (2.78x) held out.
 */
const WINDOW_MULTIPLE_FLOOR = 2.3;
/**
 * Short answers kept on the held-out chats; issue 45's goal (35%) is missed: 33.0% at 1/8 from
 * the command line (2.7x), 31.2% and 2.85x as the mean over 1/7.8, 1/8 and 1/8.2. The figure
 * moves by a point or two with any change of what is chosen (where the last compaction falls
 * shifts the request's size): the floors leave room.
 *
 * Where the misses are (`npx tsx eval/real-chat-misses.ts --set held-out|tune`, at 1/8): of the
 * 138 held-out answers missed, 41 were in an earlier summary and pushed out by a later one (28
 * of them in a round whose summary was smaller than the one before), 74 sit in one clause of
 * their evidence turn that no summary ever chose, and 23 are split by the clause cut (a list
 * cut at its commas: "about loss, | identity, and connection"; a place taken for a vocative:
 * "Edinburgh, Scotland"); tune, 275 missed: 72 pushed out (36 smaller), 168 never chosen, 35
 * split. The choice binds: scored at once (`npx tsx eval/real-chat-ranks.ts`, no rolling), the
 * clauses holding an answer are 3.5% of all; value per token ranks them with an AUC of 0.83
 * (tune) and 0.80 (held-out), and the best clauses that fit 1/16 of a chat hold an answer in
 * 30.0% (tune) and 22.8% (held-out) of cases.
 *
 * Tried on that basis, none kept (held-out no better beyond the swing): a list's commas not
 * cut (a comma before a 1-2 word item and another comma, or after such an item) together with
 * the speakers' own names not counted as names or rare words between people ("No worries,
 * Jon!" weighed 3x as a named clause): split misses 35 to 29 (tune) and 23 to 19 (held-out),
 * but those answers were then not chosen either; ranking at once AUC 0.843 / 0.812, best
 * clauses 33.5% / 24.2% hold an answer; rolling, tune mean 34.7% and 4.85x (34.9%, 4.73x on
 * main), held-out mean 32.0% and 2.92x (31.2%, 2.85x), small talk 0.7% (1.0%); eval:fidelity's
 * planted rows unchanged, its generated personal chats mixed (noisy direct 1/8 60 to 59 of 60,
 * noisy direct-rolling 1/8 43 to 41, noisy rolling 1/8 40 to 42, rolling 1/16 33 to 34). The
 * names alone: tune mean 35.0%, 4.69x. A near-repeat (a clause whose words hold at least 80%
 * or 65% of its rarity already in the summary) given no gain on top: tune mean 35.0% (4.97x)
 * and 35.4% (4.75x). Patch of the first two: not in the repo (a dozen lines in units.ts'
 * splitClauses and score-units.ts' hasProperNoun).
 *
 * A leading place, list or date is no longer taken for a vocative (units.ts' cleanUnit: a
 * bug fix, not tuned): held-out at 1/8 33.0% -> 33.5% (2.7x -> 2.9x), mean 31.2% -> 31.4%
 * (2.85x -> 2.90x); tune at 1/8 35.7% -> 34.8% (4.0x -> 3.8x), mean 34.9% -> 34.4%; the planted
 * and generated personal rows of eval:fidelity unchanged.
 */
const RETAINED_FLOOR = 0.28;
/**
 * The tuning set (seven conversations) at 1/8: 30.1% kept, 3.5x the window (31.5% and 3.5x
 * before the shorter headings: the last request is smaller, 71.7% of the window against
 * 79.2%, the summaries hold 112 answers against 113; 24.1% and 2.9x before clauses were cut at
 * commas and dated events weighed more). A chat between people that kept no user line
 * verbatim, with the summary's reserve following the target, gave 33.4% and 3.8x here but
 * cost the generated personal chats of eval:fidelity 3 of 60 facts rolling at 1/16 (58.3% to
 * 53.3%): not kept.
 *
 * More facts per token does not lift these figures: the budget binds less than the choice.
 * Read as the mean over 1/7.8, 1/8 and 1/8.2 (`--ratios 7.8,8,8.2`; one ratio swings by up to
 * 6 points on the held-out chats: 27.2%, 31.6%, 25.7%), the tuning chats keep 30.1% (4.12x);
 * a summary 40% larger (`targetPct` 0.7) keeps 31.5%. Telegraphic lines between people
 * (articles, intensifiers, hedges and a clause's leading "I" dropped) gave 31.8% at 1/8 here
 * and 31.6% held out (no change), and cost the generated personal chats of eval:fidelity a
 * tenth of their facts (their probes quote articles: "the Outer Banks", "a telescope");
 * without the articles, 28.9% (mean) here. A bare relative date ("Last night was amazing!")
 * joined to the fact said after it: 30.5% here, 27.3% held out (mean; 28.2% before). No
 * `## Task` quote between people: 31.4% here, 28.0% held out. A segment's heading charged to
 * its first chosen line: 28.8% here. No recency weight: 30.8% here. None is kept.
 *
 * The room: in a chat between people summarized by the built-in summarizer (named speakers,
 * no tool call), the summary keeping its previous size up to the target past maxSummaryTokens
 * (the plan's reserve and limit lifted to the target): 36.7% and 5.4x here at 1/8 (35.7% and
 * 4.0x before), mean over 1/7.8, 1/8 and 1/8.2 38.2% and 4.99x (34.9%, 4.73x); held out 30.1%
 * and 3.0x at 1/8 (33.0%, 2.7x), mean 31.7% and 2.89x (31.2%, 2.85x): no gain there, and the
 * generated personal chats of eval:fidelity lost 2 of 60 facts rolling at 1/16 (55.0% to
 * 51.7%). With no user line kept verbatim before the suffix too: 39.3% and 5.27x here (mean),
 * held out 33.5% and 2.7x at 1/8, mean 33.2% and 2.86x, but the personal chats then used
 * 90.1% of their target after one compaction (92.7%) and lost 1 fact rolling at 1/16. The
 * summary grows but its extra lines hold facts the held-out questions do not ask about more
 * than the verbatim turns they replace. Not kept. On that commit, weights tried here (mean
 * over the three ratios, 39.3% and 5.27x without them): a first-person clause 1.5x 38.2%, a
 * question 0.3x 38.6%, a named clause 2x 38.2% or 4x 39.3% (4.92x), no recency weight 39.2%,
 * a negative one 37.5%, the `## Task` quote given none or a tenth of the room 39.3% (5.45x)
 * or 40.4% (5.19x): none is kept (within a point of the swing).
 */
const TUNE_RETAINED_FLOOR = 0.3;
const TUNE_WINDOW_MULTIPLE_FLOOR = 3.2;

describe('real chats between two people (LoCoMo, issue 45)', () => {
  it('load as dated sessions of named turns with short answers to look for', () => {
    const chat = loadRealChat('42');
    expect(chat.messages.length).toBeGreaterThan(500);
    expect(String(chat.messages[0]!.content)).toMatch(/^\d{1,2}:\d{2} [ap]m on \d{1,2} \w+, \d{4}\n\w+: /);
    expect(chat.answers.length).toBeGreaterThan(100);
    for (const { answer } of chat.answers) expect(answer.trim().split(/\s+/).length).toBeLessThanOrEqual(5);
    // Each answer names the turns it was said in (the dataset's evidence).
    const withEvidence = chat.answers.filter((a) => a.evidence.length > 0);
    expect(withEvidence.length).toBeGreaterThan(chat.answers.length * 0.95);
    for (const { evidence } of withEvidence)
      for (const turn of evidence) expect(chat.messages).toContain(turn);
  });

  it('count an answer only when its words share one line, and small talk only without a fact', () => {
    const lines = [new Set(['moved', 'from', 'sweden']), new Set(['abstract']), new Set(['art'])];
    expect(answerable('Sweden', lines)).toBe(true);
    expect(answerable('abstract art', lines)).toBe(false);
    const speakers = new Set(['Caroline', 'Melanie']);
    expect(isSmallTalk('That must be so much fun!', speakers)).toBe(true);
    expect(isSmallTalk('Keep it up, Melanie!', speakers)).toBe(true);
    expect(isSmallTalk('My grandma gave me this necklace in Sweden.', speakers)).toBe(false);
    expect(isSmallTalk('I started playing guitar five years ago.', speakers)).toBe(false);
    expect(
      summarySentences('## Key entities and identifiers\n- X-1\n## 8 May 2023\n- Mel: Hi there. I ran.'),
    ).toEqual(['Hi there.', 'I ran.']);
  });

  it('count an answer only in a line that comes from a turn it was said in', () => {
    const said = { role: 'user', content: 'Mel: My grandma gave me this necklace in Sweden last year.' };
    const later = { role: 'user', content: 'Mel: Sweden again!' };
    const sequences = [turnSequence({ dates: new Map() }, said)];
    const evidence = new Set([said]);
    // The turn itself, and a summary line quoting a run of its words.
    expect(fromEvidence(readLine(said.content, said), evidence, sequences)).toBe(true);
    expect(fromEvidence(readLine('- Mel: gave me this necklace in Sweden'), evidence, sequences)).toBe(true);
    // The same word said in another turn, or a summary line quoting that turn, is not the fact.
    expect(fromEvidence(readLine(later.content, later), evidence, sequences)).toBe(false);
    expect(fromEvidence(readLine('- Mel: Sweden again!'), evidence, sequences)).toBe(false);
    expect(
      heldAt(
        'Sweden',
        [readLine('- Mel: Sweden again!'), readLine(later.content, later)],
        evidence,
        sequences,
      ),
    ).toBe(false);
    expect(
      heldAt('Sweden', [readLine('- Mel: this necklace in Sweden last year')], evidence, sequences),
    ).toBe(true);
  });

  it('the spread over several ratios is their mean, each ratio listed', () => {
    const total = (retained: number, window: number) => ({
      ...totalRuns([]),
      retainedShare: retained,
      windowMultiple: window,
    });
    expect(
      formatRatioSpread(
        [
          { ratio: 7.8, total: total(0.27, 2.5) },
          { ratio: 8, total: total(0.31, 2.7) },
        ],
        'held-out',
      ),
    ).toBe(
      'spread (held-out) over 2 ratios: mean 29.0% kept, 2.60x the window (1/7.8 27.0% 2.5x, 1/8 31.0% 2.7x)',
    );
  });

  it('rolling at 1/8, the held-out chats keep >= 28% of short answers, >= 2.3x a same-size window, small talk <= 10%', async () => {
    const total = totalRuns(await runRealChats(LOCOMO_SETS['held-out']));
    expect(total.ceiling).toBeGreaterThan(200);
    expect(total.retainedShare).toBeGreaterThanOrEqual(RETAINED_FLOOR);
    expect(total.windowMultiple).toBeGreaterThanOrEqual(WINDOW_MULTIPLE_FLOOR);
    expect(total.smallTalkShare).toBeLessThanOrEqual(REAL_CHAT_SMALL_TALK_TARGET);
    // The request after the last compaction fills its target.
    expect(total.targetFill).toBeGreaterThanOrEqual(0.9);
  });

  it('rolling at 1/8, the tuning chats keep >= 30% of short answers, >= 3.2x a same-size window, small talk <= 10%', async () => {
    const total = totalRuns(await runRealChats(LOCOMO_SETS.tune));
    expect(total.ceiling).toBeGreaterThan(400);
    expect(total.retainedShare).toBeGreaterThanOrEqual(TUNE_RETAINED_FLOOR);
    expect(total.windowMultiple).toBeGreaterThanOrEqual(TUNE_WINDOW_MULTIPLE_FLOOR);
    expect(total.smallTalkShare).toBeLessThanOrEqual(REAL_CHAT_SMALL_TALK_TARGET);
    expect(total.targetFill).toBeGreaterThanOrEqual(0.9);
  }, 600_000);
});
