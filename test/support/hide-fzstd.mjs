// Makes `fzstd` unresolvable in this process, as if the package were installed without its
// optional dependencies (node --import ./test/support/hide-fzstd.mjs ...): zstd's fallback.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (specifier === 'fzstd' || specifier.startsWith('fzstd/')) {
    const error = new Error("Cannot find package 'fzstd'");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`)}`,
);
