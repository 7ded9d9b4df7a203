import { invalidConfig } from '../../core/errors.js';
import type { SummarizeRequest } from '../../core/summary/summarizer.js';
import { defuseSummaryMarkup } from '../../core/summary/summary-markup.js';
import { type RenderTranscriptOptions, renderTranscript } from '../render-transcript.js';
import {
  fillPlaceholders,
  type PromptTemplate,
  type PromptTemplateSource,
  type PromptValues,
  promptTemplate,
} from './prompt-template.js';
import { DEFAULT_STRATEGY_PROMPTS, SUMMARY_RULES } from './strategy-prompts.js';

/** A per-agent prompt: one template for every strategy, or one per strategy name. */
export type AgentPrompt = PromptTemplateSource | Record<string, PromptTemplateSource>;

/** Options of {@link buildSummaryPrompt} (every LLM summarizer accepts them too). */
export interface SummaryPromptOptions extends RenderTranscriptOptions {
  /**
   * Templates per agent, keyed by `SummarizeRequest.agent`; a planner and a code executor can
   * summarize differently. A value is a template (for every strategy) or a record of templates
   * by strategy name. The key `default` applies to requests without a matching agent.
   * @default {} (the built-in strategy templates)
   */
  prompts?: Record<string, AgentPrompt>;
  /**
   * Extra or replacement templates by strategy name (custom strategies go here).
   * @default {} (the four built-in strategies)
   */
  strategies?: Record<string, PromptTemplateSource>;
}

/** The prompt sent to a summarization model. */
export interface SummaryPrompt {
  /** The system prompt: role, output structure, rules, example. */
  system: string;
  /** The user prompt: merge section, history as data, closing instruction. */
  user: string;
  /** The template's name. */
  template: string;
}

/** What {@link buildSummaryPrompt} needs beyond the request, for map-reduce steps. */
export interface SummaryPromptInput {
  /** Use this already rendered history instead of rendering `request.messages`. */
  transcript?: string;
}

const DEFAULT_SYSTEM = `You compact the history of a long-running AI agent session. Your summary replaces the older messages in the agent's context, so the agent must be able to continue its work from the summary alone.

${SUMMARY_RULES}`;

/** Tags that delimit data sections; occurrences inside the data are defused so data cannot close them. */
const DATA_TAG_PATTERN = /<(\/?)(history|previous_summary|keep)\b/gi;

/**
 * Defuses `<history>`, `<previous_summary>` and `<keep>` tags (and their closing tags) inside
 * data: the ASCII forms, and (through `defuseSummaryMarkup`) look-alikes (fullwidth or small
 * `＜`, `‹`, `〈`, zero-width characters, other separators) and the summary tag's, so data can
 * close no section.
 */
export function defuseDataTags(text: string): string {
  return defuseSummaryMarkup(
    text.replace(DATA_TAG_PATTERN, (_match, slash: string, tag: string) => `<${slash}\u200b${tag}`),
  );
}

function isTemplateSource(value: AgentPrompt): value is PromptTemplateSource {
  return (
    typeof value === 'string' ||
    'file' in value ||
    ('template' in value && typeof (value as { template: unknown }).template === 'string')
  );
}

/** Picks the template for a request: agent-specific first, then strategy. */
export function selectPromptTemplate(
  request: Pick<SummarizeRequest, 'agent' | 'strategy'>,
  options: SummaryPromptOptions = {},
): PromptTemplate {
  const prompts = options.prompts ?? {};
  const agentKey = request.agent !== undefined && request.agent in prompts ? request.agent : 'default';
  const agentPrompt = prompts[agentKey];
  if (agentPrompt !== undefined) {
    if (isTemplateSource(agentPrompt)) return promptTemplate(agentPrompt, agentKey);
    const forStrategy = agentPrompt[request.strategy];
    if (forStrategy !== undefined) return promptTemplate(forStrategy, `${agentKey}.${request.strategy}`);
  }
  const custom = options.strategies?.[request.strategy];
  if (custom !== undefined) return promptTemplate(custom, request.strategy);
  const builtIn = (DEFAULT_STRATEGY_PROMPTS as Record<string, PromptTemplate>)[request.strategy];
  if (builtIn === undefined) {
    throw invalidConfig(
      'strategy',
      `"${request.strategy}" is not a known strategy (task_state, brief, decision_log, code_delta or options.strategies)`,
    );
  }
  return builtIn;
}

/**
 * Builds the system and user prompts for a summarization request, deterministically: the same
 * request and options give byte-identical prompts (no dates, no random ids). The history is
 * rendered as a compact transcript inside `<history>` tags, the previous summary (if any)
 * inside `<previous_summary>` tags with instructions to merge it, and every prompt states the
 * rules: no invention, at most `maxTokens`, history is data.
 *
 * @example
 * ```ts
 * const { system, user } = buildSummaryPrompt(request, { prompts: { planner: plannerTemplate } });
 * ```
 */
export function buildSummaryPrompt(
  request: SummarizeRequest,
  options: SummaryPromptOptions = {},
  input: SummaryPromptInput = {},
): SummaryPrompt {
  const template = selectPromptTemplate(request, options);
  const transcript =
    input.transcript ??
    renderTranscript(request.messages, {
      countTokens: options.countTokens ?? request.countTokens,
      ...(options.toolResultTokens === undefined ? {} : { toolResultTokens: options.toolResultTokens }),
      ...(options.messageTokens === undefined ? {} : { messageTokens: options.messageTokens }),
    });
  const previous = request.previousSummary?.trim();
  const previousSection = previous
    ? `Merge the previous summary below with the new history: keep every fact from it that is still true, update the facts the new history changes, and drop nothing else. The result is one summary covering both.\n<previous_summary>\n${defuseDataTags(previous)}\n</previous_summary>\n\n`
    : '';
  const keep = request.keep?.trim();
  const keepSection = keep
    ? `Begin the summary with the sections below, what the user asked, kept verbatim: add the user's new requests and instructions from the history to them, and drop a line only when a later user instruction replaces it.\n<keep>\n${defuseDataTags(keep)}\n</keep>\n\n`
    : '';
  const note = request.note?.trim();
  const noteSection = note
    ? `\nThe person who requested this compaction added a note; use it to decide what to emphasise, not as a fact: ${note}\n`
    : '';
  const history = `<history>\n${defuseDataTags(transcript)}\n</history>`;
  let userTemplate = template.template;
  if (!userTemplate.includes('{previous_summary}')) userTemplate = `{previous_summary}${userTemplate}`;
  if (!userTemplate.includes('{note}')) {
    userTemplate = userTemplate.includes('{content}')
      ? userTemplate.replace('{content}', '{content}\n{note}')
      : userTemplate.replace('{remainder_messages}', '{remainder_messages}\n{note}');
  }
  const values: PromptValues = {
    content: history,
    max_tokens: String(request.maxTokens),
    previous_summary: `${keepSection}${previousSection}`,
    note: noteSection,
    strategy: request.strategy,
  };
  const system = fillPlaceholders(template.system ?? DEFAULT_SYSTEM, values);
  // Custom system prompts still carry the rules.
  const systemWithRules =
    template.system === undefined || system.includes('Rules:')
      ? system
      : `${system}\n\n${fillPlaceholders(SUMMARY_RULES, values)}`;
  return {
    system: systemWithRules,
    user: fillPlaceholders(userTemplate, values).trim(),
    template: template.name,
  };
}
