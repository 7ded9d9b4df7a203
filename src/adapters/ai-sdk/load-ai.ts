import { CompactError } from '../../core/errors.js';

let aiModule: Promise<typeof import('ai')> | undefined;

/** The `ai` package (an optional peer), imported at first use; a clear error when it is missing. */
export function loadAi(): Promise<typeof import('ai')> {
  aiModule ??= import('ai').catch((error: unknown) => {
    aiModule = undefined;
    throw new CompactError('missing_dependency', 'install ai: npm i ai', { cause: error });
  });
  return aiModule;
}
