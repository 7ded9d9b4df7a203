// Makes `@modelcontextprotocol/sdk` unresolvable in this process, as if it were not installed
// (node --import ./test/support/hide-mcp-sdk.mjs ...): the CLI's missing-dependency path.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@modelcontextprotocol/sdk')) {
    const error = new Error("Cannot find package '@modelcontextprotocol/sdk'");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`)}`,
);
