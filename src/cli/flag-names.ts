import type { CompactError } from '../core/errors.js';

/** The CLI flag that sets each manager option the CLI exposes. */
export const CLI_FLAGS: Readonly<Record<string, string>> = Object.freeze({
  maxContextTokens: '--max-context',
  model: '--model',
  'policy.hardCapBuffer': '--buffer',
  'policy.triggerPct': '--trigger-pct',
  'policy.keepRecentTurns': '--keep-recent-turns',
  'policy.keepToolIoPairs': '--keep-tool-io-pairs',
  'policy.maxSummaryTokens': '--max-summary-tokens',
  'policy.strategy': '--strategy',
});

// `model` is left out: the word is also plain English ("unknown model"). A name a config file
// holds as a key it does not know (`policy.keepRecentTurns is not a known key`) is the file's
// own word, not the option a flag sets: it stays.
const OPTION_NAMES = new RegExp(
  `(?<![\\w.-])(${Object.keys(CLI_FLAGS)
    .filter((key) => key !== 'model')
    .sort((a, b) => b.length - a.length)
    .map((key) => key.replace('.', '\\.'))
    .join('|')})(?![\\w])(?! is not a known key)`,
  'g',
);

/**
 * An error's message as the CLI prints it: option names replaced by the flags that set them
 * (`policy.hardCapBuffer must be smaller than maxContextTokens (1000)` becomes `--buffer must
 * be smaller than --max-context (1000)`), and a budget that cannot be met says which flags
 * change it. Options without a flag (config file only) keep their names.
 */
export function cliErrorMessage(error: CompactError): string {
  const message = cliText(error.message);
  if (error.code === 'insufficient_budget')
    return `${message} (raise --max-context, or lower --buffer or --keep-recent-turns)`;
  return message;
}

/**
 * A library text (an error, a warning) in the CLI's words: option names replaced by their
 * flags (`Pass maxContextTokens to set the window` becomes `Pass --max-context ...`).
 */
export function cliText(text: string): string {
  return text.replace(OPTION_NAMES, (name) => CLI_FLAGS[name] ?? name);
}
