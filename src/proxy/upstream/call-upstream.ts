import type { MessageFormat } from '../../core/messages/message.js';
import type { EarlyForward } from './early-forward.js';
import type { UpstreamAnswer, UpstreamCall, UpstreamClient } from './upstream-client.js';

/**
 * Whose error body the proxy's own answers take: Anthropic's (`{type: 'error', error: {type,
 * message}}`) or OpenAI's (`{error: {message, type, param, code}}`), so that each client reads
 * the proxy's errors as it reads its provider's.
 */
export type ErrorShape = 'anthropic' | 'openai';

/**
 * The error shape of a request: its route's format on a compacted path; elsewhere Anthropic's
 * when the client sent `anthropic-version` (its SDKs and Claude Code do), OpenAI's otherwise.
 */
export function errorShapeOf(format: MessageFormat | undefined, headers: Headers): ErrorShape {
  if (format !== undefined) return format === 'anthropic' ? 'anthropic' : 'openai';
  return headers.has('anthropic-version') ? 'anthropic' : 'openai';
}

/** An error the proxy answers itself, in the provider's shape (see {@link ErrorShape}). */
export function proxyError(status: number, type: string, message: string, shape: ErrorShape): Response {
  const body =
    shape === 'openai'
      ? { error: { message, type, param: null, code: null } }
      : { type: 'error', error: { type, message } };
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/**
 * Calls the upstream (through the call opened early when there is one); an unreachable upstream
 * is a 502 in the providers' error shape, and so is a kept connection reset after the request
 * went out, which is not sent again (see upstream-client.ts).
 */
export async function callUpstream(
  client: UpstreamClient,
  call: UpstreamCall,
  shape: ErrorShape,
  early?: EarlyForward,
): Promise<UpstreamAnswer | Response> {
  try {
    const answer =
      early !== undefined && Buffer.isBuffer(call.body) ? await early.release(call.body) : undefined;
    return answer ?? (await client.send(call));
  } catch (error) {
    if (call.signal.aborted) throw error;
    const cause = (error as { code?: string }).code ?? (error as Error).message;
    const { reusedSocket, unsent } = error as { reusedSocket?: boolean; unsent?: boolean };
    if (reusedSocket === true && unsent !== true)
      return proxyError(
        502,
        'upstream_connection_reset',
        `the upstream closed the connection before answering (${cause}); the request may have reached it and was not sent again`,
        shape,
      );
    // Node's parser refused the answer (HPE_HEADER_OVERFLOW: its head over 16 KB, as undici's
    // limit too; HPE_INVALID_*): the upstream was reached, its answer is what failed.
    if (cause.startsWith('HPE_'))
      return proxyError(
        502,
        'upstream_bad_response',
        `the upstream's answer could not be read (${cause})`,
        shape,
      );
    return proxyError(502, 'upstream_unreachable', `the upstream could not be reached (${cause})`, shape);
  }
}
