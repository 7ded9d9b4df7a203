import { CompactError } from '../core/errors.js';

/** Imports an optional part named in the config; a missing package is a `missing_dependency` error naming it. */
export async function loadDependency<T>(specifier: string, loader: () => Promise<T>): Promise<T> {
  try {
    return await loader();
  } catch (error) {
    throw new CompactError('missing_dependency', `cannot load ${specifier}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
