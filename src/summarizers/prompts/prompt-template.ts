import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CompactError, invalidConfig } from '../../core/errors.js';

/**
 * A summarization prompt template.
 *
 * Placeholders, replaced in one pass (a value is never scanned for placeholders again):
 * - `{content}` (required): the history to summarize, wrapped in `<history>` tags;
 * - `{max_tokens}`: the summary's token limit;
 * - `{previous_summary}`: the merge section with the previous summary (empty when there is none;
 *   when the template lacks it, the section is put right before the history);
 * - `{note}`: a manual compaction's note (empty when none; appended after the history when the
 *   template lacks it);
 * - `{strategy}`: the strategy name.
 * Any other `{...}` text is left as it is.
 */
export interface PromptTemplate {
  /** A name for events and errors (a strategy name, a file name). */
  name: string;
  /**
   * The system prompt. Custom templates without one get the built-in role and
   * {@link SUMMARY_RULES}, so the safety rules are always present.
   */
  system?: string;
  /** The user prompt, with `{content}`. */
  template: string;
}

/** Where a template comes from: its text, a template object, or a file. */
export type PromptTemplateSource = string | PromptTemplate | { file: string };

/** Placeholders a template may use. */
export const PROMPT_PLACEHOLDERS = ['content', 'max_tokens', 'previous_summary', 'note', 'strategy'] as const;

/** The values substituted into a template. */
export type PromptValues = Record<(typeof PROMPT_PLACEHOLDERS)[number], string>;

const PLACEHOLDER_PATTERN = /\{(content|remainder_messages|max_tokens|previous_summary|note|strategy)\}/g;

/**
 * Replaces the known placeholders of `text` in a single pass. `{remainder_messages}` (the
 * spec's name) is an alias of `{content}`.
 */
export function fillPlaceholders(text: string, values: PromptValues): string {
  return text.replace(PLACEHOLDER_PATTERN, (_match, key: string) =>
    key === 'remainder_messages' ? values.content : values[key as keyof PromptValues],
  );
}

function validate(template: PromptTemplate, where: string): PromptTemplate {
  if (!template.template.includes('{content}') && !template.template.includes('{remainder_messages}')) {
    throw invalidConfig(where, 'must contain the {content} (or {remainder_messages}) placeholder');
  }
  return template;
}

function fromFile(path: string): PromptTemplate {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CompactError('invalid_config', `prompt file ${path} cannot be read`, {
      cause: error,
      issues: [{ path: ['prompts', path], message: 'cannot be read' }],
    });
  }
  const extension = extname(path).toLowerCase();
  if (extension !== '.yaml' && extension !== '.yml') return validate({ name: path, template: text }, path);
  const document = parseYaml(text) as unknown;
  if (typeof document !== 'object' || document === null) {
    throw invalidConfig(path, 'must be a YAML mapping with a `template` key');
  }
  const record = document as Record<string, unknown>;
  // `content` is the key TaskWeaver's per-agent prompt files use (spec 001).
  const body = record.template ?? record.content;
  if (typeof body !== 'string') throw invalidConfig(path, 'must have a string `template` key');
  const template: PromptTemplate = {
    name: typeof record.name === 'string' ? record.name : path,
    template: body,
  };
  if (typeof record.system === 'string') template.system = record.system;
  return validate(template, path);
}

/**
 * Loads a prompt template from its text, an object, or a file (`.yaml`/`.yml` with a
 * `template` key and an optional `system` key, or any other file as plain text). The
 * template is validated here: it must contain `{content}`.
 *
 * @example
 * ```ts
 * const planner = promptTemplate({ file: './prompts/planner.yaml' });
 * const executor = promptTemplate('Summarize for a code executor. Focus on variables and results.\n{content}');
 * openaiSummarizer({ model: 'gpt-4o-mini', prompts: { planner, executor } });
 * ```
 */
export function promptTemplate(source: PromptTemplateSource, name = 'custom'): PromptTemplate {
  if (typeof source === 'string') return validate({ name, template: source }, `prompts.${name}`);
  if ('file' in source) return fromFile(source.file);
  return validate({ ...source }, `prompts.${source.name}`);
}
