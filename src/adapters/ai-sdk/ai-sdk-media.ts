/**
 * The media and encrypted reasoning of AI SDK parts as the Chat parts the manager counts
 * (never sent: the caller's own parts are), and the text of Chat content turned back.
 */

import type { AiSdkPart } from './ai-sdk-parts.js';

/** A `data:` URL (or the URL itself) of an AI SDK file's data: base64, bytes, a URL. */
function fileUrl(data: unknown, mediaType: string): string | undefined {
  if (data instanceof URL) return data.href;
  const bytes =
    data instanceof Uint8Array ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : undefined;
  if (bytes)
    return `data:${mediaType};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64')}`;
  if (typeof data !== 'string') return undefined;
  return /^(data:|https?:)/i.test(data) ? data : `data:${mediaType};base64,${data}`;
}

/**
 * The Chat part the counter reads for an AI SDK image or file (a prompt's `file`, a model
 * message's `image` or `file`, a tool output's `image-*` / `file-*` / `media`): an `image_url`
 * for images, a `file` for the rest. Never sent (the caller's part is), only counted.
 */
export function mediaPart(part: AiSdkPart): Record<string, unknown> | undefined {
  const image =
    part.type === 'image' || part.type.startsWith('image-') || part.mediaType?.startsWith('image/');
  const mediaType = part.mediaType ?? (image ? 'image/png' : 'application/octet-stream');
  const id = part.fileId;
  if (part.type === 'file-id' || part.type === 'image-file-id')
    return { type: 'file', file: { file_id: typeof id === 'string' ? id : JSON.stringify(id ?? '') } };
  if (!['file', 'image', 'media', 'file-data', 'file-url', 'image-data', 'image-url'].includes(part.type))
    return undefined;
  const url = fileUrl(part.data ?? part.image ?? part.url, mediaType);
  if (url === undefined) return undefined;
  if (image) return { type: 'image_url', image_url: { url } };
  // A document by URL has no data here: counted at the default page count.
  return { type: 'file', file: url.startsWith('data:') ? { file_data: url } : {} };
}

/** `text` as Chat content with the media of `source` beside it (a string when there are none). */
export function withMedia(text: string, source: readonly AiSdkPart[]): unknown {
  const media = source.flatMap((part) => mediaPart(part) ?? []);
  if (media.length === 0) return text;
  return text === '' ? media : [{ type: 'text', text }, ...media];
}

/**
 * A tool result's content as the manager counts it: its text with its media beside it, or, when
 * the provider sends tool result media as text (`mediaAsText`), the JSON it sends.
 */
export function resultContent(part: AiSdkPart, text: string, mediaAsText: boolean): unknown {
  const media = outputParts(part);
  if (mediaAsText && media.length > 0) return JSON.stringify((part.output as { value: unknown }).value);
  return withMedia(text, media);
}

/**
 * Whether an AI SDK provider sends the media of a tool result as text: the OpenAI Chat provider
 * (`openai.chat`) and the OpenAI-compatible chat providers (`<name>.chat`) send a `content` output
 * as its JSON, base64 and all; Anthropic, Responses and Gemini send the images as images.
 */
export function sendsMediaAsText(provider: string | undefined): boolean {
  return provider?.endsWith('.chat') === true;
}

/** The text of Chat content (its text parts joined when it is an array of parts). */
export function chatText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return JSON.stringify(content ?? '');
  return content
    .filter((part) => typeof (part as AiSdkPart | null)?.text === 'string')
    .map((part) => (part as { text: string }).text)
    .join('\n');
}

/**
 * The encrypted reasoning the provider gets back with an assistant message, which the AI SDK
 * keeps in a reasoning part's provider options (OpenAI's `reasoningEncryptedContent`,
 * Anthropic's `redactedData`): as `{ encrypted_content }` objects, counted by their length.
 */
export function encryptedReasoning(all: readonly AiSdkPart[]): { encrypted_content: string }[] {
  const out: { encrypted_content: string }[] = [];
  for (const part of all) {
    if (part.type !== 'reasoning' && part.type !== 'redacted-reasoning') continue;
    const options = part.providerOptions as Record<string, Record<string, unknown> | undefined> | undefined;
    for (const data of [
      options?.openai?.reasoningEncryptedContent,
      options?.anthropic?.redactedData,
      part.data,
    ])
      if (typeof data === 'string' && data !== '') out.push({ encrypted_content: data });
  }
  return out;
}

/** The media parts of a tool result's `content` output. */
export function outputParts(part: AiSdkPart): readonly AiSdkPart[] {
  const output = part.output as { type?: string; value?: unknown } | undefined;
  return output?.type === 'content' && Array.isArray(output.value) ? (output.value as AiSdkPart[]) : [];
}
