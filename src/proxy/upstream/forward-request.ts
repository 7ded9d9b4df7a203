/**
 * How a request reaches the upstream: the URL is the configured upstream's origin and base
 * path with one checked path appended, never anything the request says about a host (its
 * `Host` header, an absolute request target, `//host` or `..` in its path); the headers are
 * the client's (credentials included, passed on and nowhere else) minus the hop-by-hop ones
 * (the standard ones and those its `Connection` header names) and the proxy's own.
 */
import { CompactError } from '../../core/errors.js';
import { SESSION_HEADER } from '../sessions/session-of-request.js';

/** Request headers never forwarded: hop-by-hop, framing the proxy redoes, and its own. */
const DROPPED_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
  'forwarded',
  'via',
  // The answer is streamed back as it is decoded: ask the upstream for no compression.
  'accept-encoding',
  SESSION_HEADER,
]);

/**
 * Response headers not passed back: framing of the upstream's connection, not of ours. The
 * body's bytes are the upstream's own (not decoded), so its length and encoding stay.
 */
const DROPPED_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'trailer',
  'upgrade',
]);

/** A path the proxy forwards: `/v1/...` with plain segments only. */
const FORWARDABLE_PATH = /^\/v1(?:\/[A-Za-z0-9._~-]+)+$/;

/** The upstream, checked once: an `http(s)` URL without credentials, query or fragment. */
export function parseUpstream(value: string | URL): URL {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw upstreamError(`is not a URL (got ${String(value)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw upstreamError('must be http or https');
  if (url.username !== '' || url.password !== '')
    throw upstreamError('must not carry credentials (clients send their own)');
  if (url.search !== '' || url.hash !== '') throw upstreamError('must not carry a query or fragment');
  return url;
}

function upstreamError(problem: string): CompactError {
  return new CompactError('invalid_config', `upstream ${problem}`, {
    issues: [{ path: ['upstream'], message: problem }],
  });
}

/**
 * The upstream URL for a request to `path` (with its query string `search`), or `undefined`
 * when the path is not one the proxy forwards. The upstream is a base URL as the provider's SDK
 * takes it: an origin alone (`https://api.openai.com`, `https://api.anthropic.com`) takes the
 * whole path; a base path ending in `/v1` (`https://api.openai.com/v1`) takes it without its
 * own `/v1`. Any other base path is an OpenAI-compatible base URL that names its own version
 * (`https://generativelanguage.googleapis.com/v1beta/openai`, a gateway's `.../openai`), which
 * takes the path without `/v1` too, except for Anthropic's requests (`anthropic`: the client
 * sent `anthropic-version` on a path the proxy does not compact, or called `/v1/messages`):
 * Anthropic's base URLs carry no version (a gateway's `.../anthropic` takes `/v1/messages`).
 */
export function upstreamUrl(upstream: URL, path: string, search: string, anthropic = false): URL | undefined {
  if (!FORWARDABLE_PATH.test(path) || path.split('/').some((segment) => segment === '..' || segment === '.'))
    return undefined;
  const base = upstream.pathname.replace(/\/+$/, '');
  const versioned = base.endsWith('/v1') || (base !== '' && !anthropic);
  const tail = versioned ? path.slice(3) : path;
  const query = search.startsWith('?') ? search : '';
  const url = new URL(`${upstream.origin}${base}${tail}${query}`);
  // Belt and braces: whatever the path held, the host is the configured one.
  return url.origin === upstream.origin ? url : undefined;
}

/** Whether a client's request is Anthropic's: its SDKs and Claude Code send `anthropic-version`. */
export function isAnthropicRequest(headers: Headers): boolean {
  return headers.has('anthropic-version');
}

/**
 * The names a message's `Connection` header lists: hop-by-hop for that message (RFC 9110
 * 7.6.1), removed by a proxy like the standard ones.
 */
function nominated(connection: string | null | undefined): Set<string> {
  const names = new Set<string>();
  for (const name of (connection ?? '').split(',')) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed !== '') names.add(trimmed);
  }
  return names;
}

/** The client's headers as forwarded to the upstream. */
export function forwardHeaders(headers: Headers): Record<string, string> {
  const hop = nominated(headers.get('connection'));
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!DROPPED_REQUEST_HEADERS.has(name) && !hop.has(name)) out[name] = value;
  });
  return out;
}

/**
 * The upstream's response headers (Node's `rawHeaders`, name and value in turn) as passed back
 * to the client, in the same flat form; `content-length` too unless `withLength` is false.
 */
export function responseHeaders(raw: readonly string[], withLength = true): string[] {
  const out: string[] = [];
  const connections: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2)
    if (raw[i]!.toLowerCase() === 'connection') connections.push(raw[i + 1]!);
  const hop = nominated(connections.join(','));
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (DROPPED_RESPONSE_HEADERS.has(name) || hop.has(name) || (!withLength && name === 'content-length'))
      continue;
    out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}
