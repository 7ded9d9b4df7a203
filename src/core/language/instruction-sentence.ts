/**
 * Whether a user's sentence is an instruction to the assistant: it asks the assistant to do, keep,
 * avoid or prefer something (requests, wants and preferences, conditions, orders, imperatives,
 * "don't"), not thanks, small talk, narrative or a question answered at once. Decided by the
 * learned model of instruction-model.ts (issue 45; trained on seven licensed sources, measured by
 * leaving one source out), and by who the user talks to: the same "Check this" is work for an AI
 * assistant and small talk to a friend.
 */

import type { CompactMessage } from '../messages/message.js';
import { runSteps, type Steps } from '../time-slice.js';
import { tokenCount } from './data-line.js';
import {
  headOf,
  type InstructionContext,
  type LaterCue,
  type SentencePosition,
} from './instruction-features.js';
import { INSTRUCTION_THRESHOLD, isInstructionBy } from './instruction-model.js';
import { isKeyMaterial } from './key-identifiers.js';
import type { MaterialCue } from './material-cue.js';

export type { InstructionContext, LaterCue, SentencePosition } from './instruction-features.js';
export { positionOf } from './instruction-features.js';
export { laterCuesOf } from './later-cue.js';
export { type MaterialCue, materialCuesOf } from './material-cue.js';

/**
 * True when `sentence`, said to `context` at `position` among its message's sentences, with
 * `later` telling what the sentences after it ask (`laterCuesOf`) and `material` whether it stands
 * in quoted material (`materialCuesOf`: a quoted sentence is never one), asks, forbids, requires
 * or prefers something of it: the model's log-odds over `threshold` (0: more likely than not).
 */
export function isInstructionSentence(
  sentence: string,
  context: InstructionContext = 'assistant',
  threshold = INSTRUCTION_THRESHOLD,
  position?: SentencePosition,
  later?: LaterCue,
  material?: MaterialCue,
): boolean {
  // A line of key material (a PEM body line, a pasted key) is data, not an instruction.
  const head = headOf(sentence);
  if (tokenCount(head, 4) <= 3 && head.trim().split(/\s+/, 4).some(isKeyMaterial)) return false;
  return isInstructionBy(sentence, context, undefined, threshold, position, later, material);
}

const ASSISTANT_ROLES = new Set(['system', 'developer', 'tool', 'function']);
const TOOL_ITEMS = new Set(['function_call', 'function_call_output', 'tool_use', 'tool_result', 'tool-call']);

/** True when a wire message shows an assistant's setup: a system or developer prompt, a tool call or result. */
function wireShowsAssistant(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const {
    role,
    type,
    tool_calls: toolCalls,
  } = message as { role?: unknown; type?: unknown; tool_calls?: unknown };
  if (typeof role === 'string' && ASSISTANT_ROLES.has(role)) return true;
  if (typeof type === 'string' && TOOL_ITEMS.has(type)) return true;
  return Array.isArray(toolCalls) && toolCalls.length > 0;
}

/**
 * Who the user talks to in `messages`: an AI `assistant` when anything shows one (a system or
 * developer prompt, a tool call or result, in the messages or in the request last sent), else a
 * `person` (a chat between people, imported or relayed, where "Look at this!" is small talk).
 */
export function instructionContextOf(
  messages: readonly CompactMessage[],
  sent: readonly unknown[] = [],
): InstructionContext {
  return runSteps(instructionContextSteps(messages, sent));
}

/** Messages looked at between two pauses of {@link instructionContextSteps}. */
const CONTEXT_STEP = 1_024;

/**
 * {@link instructionContextOf} as {@link Steps}: a pause every {@link CONTEXT_STEP} messages
 * (a chat of 300k user messages and the request last sent, read through in one step, held the
 * loop 17-28 ms: issue 47).
 */
export function* instructionContextSteps(
  messages: readonly CompactMessage[],
  sent: readonly unknown[] = [],
): Steps<InstructionContext> {
  for (let i = 0; i < messages.length; i++) {
    if (i % CONTEXT_STEP === CONTEXT_STEP - 1) yield;
    const message = messages[i]!;
    if (message.role === 'system' || message.role === 'developer' || message.role === 'tool')
      return 'assistant';
    if (message.toolCalls.length > 0 || message.toolResults.length > 0) return 'assistant';
  }
  for (let i = 0; i < sent.length; i++) {
    if (i % CONTEXT_STEP === CONTEXT_STEP - 1) yield;
    if (wireShowsAssistant(sent[i])) return 'assistant';
  }
  return 'person';
}
