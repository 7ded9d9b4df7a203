// ESM loader hooks that append every resolved module URL to $LOAD_LOG.
import { appendFileSync } from 'node:fs';

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.LOAD_LOG, `${result.url}\n`);
  return result;
}
