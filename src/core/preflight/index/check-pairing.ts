/**
 * Broken input: an orphan or duplicate tool result, or a call left unanswered (before a new
 * user turn or at the end of the request), makes providers reject the request. By default that is
 * an `invalid_messages` error naming the index; with `policy.repairInput` the history is
 * repaired instead: orphan and duplicate results dropped, unanswered calls answered with a
 * short placeholder result (one object per call, reused across calls).
 */
import type { Positional } from '../../chunked-list.js';
import { invalidMessage } from '../../errors.js';
import type { InputRepair } from '../../manager/manager-options.js';
import type { MessageFormat } from '../../messages/message.js';
import type { IndexedMessage } from '../../messages/message-index.js';
import type { PairingFinding, ToolPairer } from '../../messages/tool-pairing.js';

export type { InputRepair } from '../../manager/manager-options.js';

/**
 * The field of `message` that holds a finding's call or result, in `format`: a Chat
 * Completions call in `tool_calls`, its result a `tool` message's `tool_call_id`; an
 * Anthropic `tool_use` or `tool_result` block in `content`; a Responses item's `call_id`.
 */
function findingField(finding: PairingFinding, format: MessageFormat, message: unknown): string {
  if (format === 'openai-responses') return 'call_id';
  if (format === 'openai-chat')
    return finding.kind === 'dangling_call' ? `tool_calls.${finding.position}` : 'tool_call_id';
  const type = finding.kind === 'dangling_call' ? 'tool_use' : 'tool_result';
  const content = (message as { content?: unknown } | undefined)?.content;
  let seen = 0;
  if (Array.isArray(content))
    for (let i = 0; i < content.length; i++)
      if ((content[i] as { type?: unknown } | null)?.type === type && seen++ === finding.position)
        return `content.${i}`;
  return 'content';
}

/** Throws `invalid_messages` for the first finding, naming the field that holds it. */
export function assertSoundPairing(
  findings: readonly PairingFinding[],
  format: MessageFormat,
  history: readonly unknown[],
): void {
  const first = findings[0];
  if (!first) return;
  const what =
    first.kind === 'orphan_result'
      ? `answers call "${first.callId}", which no call of its round made (orphan tool result)`
      : first.kind === 'duplicate_result'
        ? `answers call "${first.callId}" a second time (duplicate tool result)`
        : `call "${first.callId}" has no result (unanswered tool call); pass policy.repairInput to answer it with a placeholder`;
  throw invalidMessage(first.index, findingField(first, format, history[first.index]), what);
}

/** The placeholder text of an unanswered call. */
export const DANGLING_CALL_RESULT = '[agent-compaction: this tool call was interrupted and has no result]';

const placeholders = new WeakMap<object, Map<string, unknown>>();

function placeholderResult(format: MessageFormat, callRaw: unknown, callId: string): unknown {
  const key = callRaw as object;
  let byCall = placeholders.get(key);
  if (!byCall) {
    byCall = new Map();
    placeholders.set(key, byCall);
  }
  let wire = byCall.get(callId);
  if (!wire) {
    wire =
      format === 'openai-chat'
        ? { role: 'tool', tool_call_id: callId, content: DANGLING_CALL_RESULT }
        : format === 'openai-responses'
          ? { type: 'function_call_output', call_id: callId, output: DANGLING_CALL_RESULT }
          : {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: callId, content: DANGLING_CALL_RESULT, is_error: true },
              ],
            };
    byCall.set(callId, wire);
  }
  return wire;
}

function withoutResults(raw: unknown, format: MessageFormat, drop: ReadonlySet<number>): unknown | undefined {
  if (format !== 'anthropic') return undefined;
  const record = raw as Record<string, unknown>;
  if (!Array.isArray(record.content)) return undefined;
  let position = -1;
  const content = record.content.filter((block) => {
    if (block === null || typeof block !== 'object' || (block as { type?: unknown }).type !== 'tool_result')
      return true;
    position++;
    return !drop.has(position);
  });
  return content.length > 0 ? { ...record, content } : undefined;
}

/** The repaired history and what was repaired. */
export function repairHistory(
  history: readonly unknown[],
  items: Positional<IndexedMessage>,
  findings: readonly PairingFinding[],
  format: MessageFormat,
  rounds: { readonly round: Positional<number>; roundEnd(round: number): number },
): { history: unknown[]; repairs: InputRepair[] } {
  const repairs: InputRepair[] = [];
  const dropResults = new Map<number, Set<number>>();
  const answerAfter = new Map<number, unknown[]>();
  for (const finding of findings) {
    if (finding.kind === 'dangling_call') {
      const r = rounds.round.at(finding.index) ?? -1;
      const after = r >= 0 ? rounds.roundEnd(r) : finding.index;
      const list = answerAfter.get(after) ?? [];
      list.push(placeholderResult(format, history[finding.index], finding.callId));
      answerAfter.set(after, list);
      repairs.push({ kind: 'answered_dangling_call', index: finding.index, callId: finding.callId });
    } else {
      const set = dropResults.get(finding.index) ?? new Set();
      set.add(finding.position);
      dropResults.set(finding.index, set);
      repairs.push({
        kind: finding.kind === 'orphan_result' ? 'dropped_orphan_result' : 'dropped_duplicate_result',
        index: finding.index,
        callId: finding.callId,
      });
    }
  }
  const out: unknown[] = [];
  history.forEach((raw, i) => {
    const drop = dropResults.get(i);
    if (!drop) out.push(raw);
    else if (
      drop.size < items.at(i)!.entry.parsed.toolResults.length ||
      items.at(i)!.entry.parsed.text !== ''
    ) {
      const kept = withoutResults(raw, format, drop);
      if (kept !== undefined) out.push(kept);
    }
    const answers = answerAfter.get(i);
    if (answers) out.push(...answers);
  });
  return { history: out, repairs };
}

/**
 * Step 1's check of an indexed history: nothing to do (`undefined`) when its pairing is sound,
 * an `invalid_messages` error for broken input, or the repaired history with `policy.repairInput`.
 */
export function pairingRepair(
  history: readonly unknown[],
  indexed: { readonly pairer: ToolPairer; readonly items: Positional<IndexedMessage> },
  format: MessageFormat,
  repairInput: boolean,
): { history: unknown[]; repairs: InputRepair[] } | undefined {
  // Calls of the last round still unanswered are rejected by every provider, like the rest.
  const open = indexed.pairer.openFindings();
  if (indexed.pairer.findings.length === 0 && open.length === 0) return undefined;
  const findings = [...indexed.pairer.findings, ...open].sort(
    (a, b) => a.index - b.index || a.position - b.position,
  );
  if (!repairInput) assertSoundPairing(findings, format, history);
  return repairHistory(history, indexed.items, findings, format, indexed.pairer);
}
