/**
 * `npx tsx bench/first-steps.ts scoring|redactor-sync|redactor-async [--root=DIR]`: in this fresh
 * process, the longest piece of a first use (issue 47 point 2), by CPU (`process.cpuUsage`):
 *
 * - `scoring`: the longest single step of the embedded summary's first scoring of 4 units
 *   (`scoreUnitSteps`; the rank table and the signals' expressions are built in it);
 * - `redactor-sync` / `redactor-async`: the most CPU between two turns of the loop while the
 *   default redactor is built by `createRedactor()` / `createRedactorAsync()`;
 * - `redactor-default`: the same while the library's own default redactor is got and used once
 *   (`await warmDefaultRedactor()` where the tree has it, then `getDefaultRedactor()`);
 * - `ariadne-post`: the same around the Ariadne exporter's first POST (answered 400, so its log
 *   line is redacted);
 * - `user-sections`: the longest step of the summary's user sections rendered into 1,130 tokens
 *   with 917 instruction lines (as the CLI's 16k history has), the gpt-4o counter loaded ahead.
 *
 * `--root` points at another copy of the repository (e.g. main, `git archive`d with
 * node_modules linked) to compare old and new alternated. Run each mode several times: a fresh
 * process per run is the point.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const mode = process.argv[2] ?? 'scoring';
const root = resolve(
  process.argv.find((a) => a.startsWith('--root='))?.slice(7) ??
    fileURLToPath(new URL('..', import.meta.url)),
);
const cpu = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** Runs `steps` to the end: how many steps, the longest and the total CPU ms. */
function timeSteps(steps: { next(): { done?: boolean } }) {
  let longest = 0;
  let count = 0;
  let total = 0;
  for (let done = false; !done; count++) {
    const at = cpu();
    done = steps.next().done === true;
    const spent = cpu() - at;
    longest = Math.max(longest, spent);
    total += spent;
  }
  return { count, longest, total };
}

if (mode === 'scoring') {
  const { scoreUnitSteps } = await import(`${root}/src/core/summary/embedded/score-units.ts`);
  const { contentWords } = await import(`${root}/src/core/summary/embedded/units.ts`);
  const texts = [
    'We moved here from Sweden and I signed up for a "pottery" class on Monday!',
    'Did you run the tests? I think the build at 3pm failed because of the token.',
    'That must have been amazing, hope you got some rest',
    'The deploy is blocked because the migration never finished; next step: rerun it.',
  ];
  const units = texts.map((text, order) => ({
    text,
    speaker: 'user',
    source: 'user',
    segment: 0,
    order,
    words: contentWords(text),
    value: 0,
  }));
  const { count, longest, total } = timeSteps(scoreUnitSteps(units, { agentic: true }));
  console.log(
    `${root}: first scoring, ${count} steps, longest ${longest.toFixed(1)} ms, total ${total.toFixed(1)} ms`,
  );
} else if (mode === 'user-sections') {
  const sections = await import(`${root}/src/core/summary/embedded/user-sections.ts`);
  const { tokenCounterFor } = await import(`${root}/src/core/counting/token-counter.ts`);
  const counter = tokenCounterFor('gpt-4o');
  await counter.ready?.();
  counter.countText('warm up the counter');
  const topics = ['the billing service', 'ticket BILL-204', 'pnpm, not npm', 'Node 20', 'the schema'];
  const instructions = Array.from(
    { length: 917 },
    (_, i) =>
      `"Keep ${topics[i % topics.length]} in mind for step ${i}, and never edit src/generated/${i}.ts."`,
  );
  const input = { task: ['"Port the billing service to Postgres 15."'], instructions };
  const count = (text: string) => counter.countText(text);
  const steps = sections.renderUserSectionSteps
    ? sections.renderUserSectionSteps(input, 1_130, count)
    : { next: () => ({ done: true, value: sections.renderUserSections(input, 1_130, count) }) };
  const { count: taken, longest, total } = timeSteps(steps);
  console.log(
    `${root}: user sections, ${taken} steps, longest ${longest.toFixed(2)} ms, total ${total.toFixed(2)} ms`,
  );
} else {
  const redaction = await import(`${root}/src/core/redaction/redactor.ts`);
  const ariadne =
    mode === 'ariadne-post' ? await import(`${root}/src/exporters/ariadne/ariadne-post.ts`) : undefined;
  const answer = async () => new Response('bad request', { status: 400 });
  // Node loads its fetch classes on first use: the bench's transport, not the path's.
  await (await answer()).text();
  await new Promise((done) => setImmediate(done));
  let last = cpu();
  let longest = 0;
  let stopped = false;
  const tick = () => {
    const now = cpu();
    longest = Math.max(longest, now - last);
    last = now;
    if (!stopped) setImmediate(tick);
  };
  setImmediate(tick);
  const at = cpu();
  if (mode === 'redactor-sync') redaction.createRedactor();
  else if (mode === 'redactor-async') await redaction.createRedactorAsync();
  else if (mode === 'redactor-default') {
    await redaction.warmDefaultRedactor?.();
    redaction.getDefaultRedactor()('password: hunter2');
  } else if (ariadne) {
    const target = {
      url: 'https://ariadne.example/v1/spans',
      headers: {},
      timeoutMs: 1_000,
      fetch: answer,
      warn: () => {},
    };
    await ariadne.postToAriadne(target, '[]', 0, 1);
  } else throw new Error(`unknown mode ${mode}`);
  const total = cpu() - at;
  tick();
  stopped = true;
  console.log(`${root}: ${mode}, longest block ${longest.toFixed(1)} ms, build ${total.toFixed(1)} ms`);
}
