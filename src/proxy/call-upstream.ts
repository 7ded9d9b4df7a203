import type { EarlyForward } from './early-forward.js';
import type { UpstreamAnswer, UpstreamCall, UpstreamClient } from './upstream-client.js';

/** An error the proxy answers itself, in the providers' shape (`{error: {type, message}}`). */
export function proxyError(status: number, type: string, message: string): Response {
  return new Response(JSON.stringify({ type: 'error', error: { type, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * Calls the upstream (through the call opened early when there is one); an unreachable upstream
 * is a 502 in the providers' error shape, and so is a kept connection reset after the request
 * went out, which is not sent again (see upstream-client.ts).
 */
export async function callUpstream(
  client: UpstreamClient,
  call: UpstreamCall,
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
      );
    // Node's parser refused the answer (HPE_HEADER_OVERFLOW: its head over 16 KB, as undici's
    // limit too; HPE_INVALID_*): the upstream was reached, its answer is what failed.
    if (cause.startsWith('HPE_'))
      return proxyError(502, 'upstream_bad_response', `the upstream's answer could not be read (${cause})`);
    return proxyError(502, 'upstream_unreachable', `the upstream could not be reached (${cause})`);
  }
}
