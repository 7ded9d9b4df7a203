/**
 * `agent-compaction/counting`: the model table and the token counting the manager uses,
 * for budgeting outside a preflight: {@link modelInfo} (window and tokenizer of a model
 * name), {@link tokenCounterFor}, image and document costs, and {@link UsageCalibration},
 * which corrects estimates from the usage providers report.
 *
 * @example
 * ```ts
 * import { modelInfo, tokenCounterFor } from 'agent-compaction/counting';
 *
 * const { contextWindow } = modelInfo('gpt-4o-2024-08-06');
 * const tokens = tokenCounterFor('gpt-4o').countText('How long is this?');
 * ```
 *
 * @packageDocumentation
 */

export {
  ANTHROPIC_IMAGE_RULE,
  GEMINI_IMAGE_RULE,
  type ImageDimensions,
  type ImageRule,
  imageDimensions,
  imageRuleFor,
  imageTokens,
  OPENAI_TILE_RULE,
} from './count-image.js';
export {
  DEFAULT_DOCUMENT_PAGES,
  ENCRYPTED_CHARS_PER_TOKEN,
  mediaTokens,
  PDF_PAGE_TOKENS,
} from './count-media.js';
export {
  closestModelName,
  type EncodingName,
  MODEL_FAMILIES,
  type ModelFamily,
  type ModelInfo,
  type ModelProvider,
  modelInfo,
  normalizeModelName,
  UNKNOWN_MODEL_CONTEXT_WINDOW,
} from './model-table.js';
export {
  DEFAULT_ESTIMATE_MARGIN,
  type TokenCounter,
  tokenCounterFor,
} from './token-counter.js';
export {
  type CalibratedCount,
  type CalibrationState,
  countFromLastUsage,
  DEFAULT_CALIBRATION_OPTIONS,
  type LastUsageInput,
  UsageCalibration,
  type UsageCalibrationOptions,
  type UsageSample,
} from './usage-calibration.js';
