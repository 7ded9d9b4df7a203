/**
 * Finds the parts of a message that are not text but still cost input tokens: images,
 * documents (PDF and other files) and encrypted reasoning. Works on the caller's wire
 * object, whatever the format: OpenAI Chat (`image_url`, `file`), Responses and the Agents
 * SDK (`input_image`, `input_file`, `computer_screenshot`, `reasoning.encrypted_content`,
 * images inside tool outputs), Anthropic (`image`, `document`, `redacted_thinking`, images
 * inside `tool_result`).
 */

/** How OpenAI is asked to look at an image. */
export type ImageDetail = 'low' | 'high' | 'auto';

/** A non-text part of a message. */
export type MediaPart =
  | {
      kind: 'image';
      /** Base64 bytes or a `data:` URL, when the image travels inline. */
      data?: string;
      /** OpenAI's `detail` (absent means `auto`). */
      detail?: ImageDetail;
    }
  | {
      kind: 'document';
      /** Base64 bytes or a `data:` URL, when the file travels inline. */
      data?: string;
      /** The document's text, for plain-text sources. */
      text?: string;
      /** The media type when given (`application/pdf`, `text/plain`). */
      mediaType?: string;
      /** The provider's file id, for a file sent by reference (its size is unknown here). */
      fileId?: string;
    }
  | {
      kind: 'audio';
      /** Base64 audio (Chat `input_audio.data`). */
      data?: string;
      /** `wav`, `mp3`... as given. */
      format?: string;
    }
  | {
      kind: 'encrypted';
      /** The encrypted payload (base64). */
      data: string;
    };

/** Objects deeper than this are not searched (wire messages are shallow). */
const MAX_DEPTH = 8;
/** At most this many objects are visited per message. */
const MAX_NODES = 20_000;

const IMAGE_TYPES = new Set(['image_url', 'input_image', 'image', 'computer_screenshot']);
/**
 * Keys never searched: tool arguments and schemas are the model's or the caller's data (an
 * argument may well look like `{ "type": "image" }`), `meta` is never sent.
 */
const SKIPPED_KEYS = new Set(['meta', 'input', 'arguments', 'parameters', 'input_schema']);
const DOCUMENT_TYPES = new Set(['document', 'input_file', 'file']);

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function detailOf(value: unknown): ImageDetail | undefined {
  return value === 'low' || value === 'high' || value === 'auto' ? value : undefined;
}

/** An image node: Chat `image_url`, Responses `input_image`, Anthropic `image`, screenshots. */
function imagePart(node: Record<string, unknown>): MediaPart {
  const part: MediaPart = { kind: 'image' };
  const nested = node.image_url;
  const source = node.source as Record<string, unknown> | undefined;
  let url: string | undefined;
  let detail = detailOf(node.detail);
  if (nested !== null && typeof nested === 'object') {
    const n = nested as Record<string, unknown>;
    url = str(n.url);
    detail ??= detailOf(n.detail);
  } else {
    url = str(nested) ?? str(node.url) ?? str(node.image) ?? str(node.data);
  }
  if (source && typeof source === 'object' && source.type === 'base64') url = str(source.data);
  if (url !== undefined && !/^https?:/i.test(url)) part.data = url;
  if (detail !== undefined) part.detail = detail;
  return part;
}

/** A document node: Anthropic `document`, Responses `input_file`, Chat `file`. */
function documentPart(node: Record<string, unknown>): MediaPart {
  const part: MediaPart & { kind: 'document' } = { kind: 'document' };
  const file = (node.file !== null && typeof node.file === 'object' ? node.file : node) as Record<
    string,
    unknown
  >;
  const source = node.source as Record<string, unknown> | undefined;
  if (source && typeof source === 'object') {
    const mediaType = str(source.media_type);
    if (mediaType !== undefined) part.mediaType = mediaType;
    if (source.type === 'base64' && typeof source.data === 'string') part.data = source.data;
    else if (source.type === 'text' && typeof source.data === 'string') part.text = source.data;
    else if (source.type === 'content' && Array.isArray(source.content)) {
      part.text = source.content
        .map((block) => str((block as Record<string, unknown> | null)?.text) ?? '')
        .join('\n');
    }
    return part;
  }
  const data = str(file.file_data);
  if (data !== undefined) part.data = data;
  const fileId = str(file.file_id);
  if (data === undefined && fileId !== undefined) part.fileId = fileId;
  return part;
}

/** A Chat `input_audio` part: `{ input_audio: { data, format } }`. */
function audioPart(node: Record<string, unknown>): MediaPart {
  const audio = (node.input_audio ?? {}) as Record<string, unknown>;
  const part: MediaPart & { kind: 'audio' } = { kind: 'audio' };
  const data = str(audio.data);
  const format = str(audio.format);
  if (data !== undefined) part.data = data;
  if (format !== undefined) part.format = format;
  return part;
}

/**
 * The media parts of one wire message or item, in order. Never throws on odd shapes: what
 * it does not recognize is left to the text count.
 */
export function mediaParts(raw: unknown): MediaPart[] {
  const parts: MediaPart[] = [];
  let visited = 0;
  const visit = (node: unknown, depth: number): void => {
    if (node === null || typeof node !== 'object' || depth > MAX_DEPTH || visited >= MAX_NODES) return;
    visited++;
    if (Array.isArray(node)) {
      for (const child of node) visit(child, depth + 1);
      return;
    }
    const n = node as Record<string, unknown>;
    const type = n.type;
    if (typeof type === 'string') {
      if (IMAGE_TYPES.has(type)) {
        parts.push(imagePart(n));
        return;
      }
      if (DOCUMENT_TYPES.has(type)) {
        parts.push(documentPart(n));
        return;
      }
      if (type === 'input_audio') {
        parts.push(audioPart(n));
        return;
      }
      if (type === 'image_generation_call' && typeof n.result === 'string' && n.result !== '') {
        parts.push({ kind: 'image', data: n.result });
        return;
      }
      if (type === 'redacted_thinking' && typeof n.data === 'string') {
        parts.push({ kind: 'encrypted', data: n.data });
        return;
      }
      // An Anthropic compaction block (a content block, never top level): its summary is
      // counted as text, its `encrypted_content` is metadata sent back verbatim, not model
      // input (provider-compaction.ts). A Responses compaction item (top level) falls through:
      // its payload is counted by length.
      if (type === 'compaction' && depth > 0) return;
    }
    if (typeof n.encrypted_content === 'string' && n.encrypted_content.length > 0) {
      parts.push({ kind: 'encrypted', data: n.encrypted_content });
    }
    for (const key in n) {
      if (SKIPPED_KEYS.has(key)) continue;
      const child = n[key];
      if (child !== null && typeof child === 'object') visit(child, depth + 1);
    }
  };
  visit(raw, 0);
  return parts;
}

/** Payloads shorter than this are left in the text (too short to matter). */
const MIN_ELIDED_CHARS = 32;

/**
 * `text` with the payloads of `parts` (base64 images, files, encrypted reasoning) replaced by
 * `[data]`, for text made from the structure that carries them (a screenshot object in a tool
 * output, an image generation result, an item kept as JSON): counted as the media, never as
 * megabytes of base64 text. Base64 needs no JSON escaping, so a payload appears verbatim.
 */
export function elideMedia(text: string, parts: readonly MediaPart[]): string {
  let out = text;
  for (const part of parts) {
    const data = part.data;
    if (data === undefined || data.length < MIN_ELIDED_CHARS || out.length < data.length) continue;
    const pieces = out.split(data);
    if (pieces.length > 1) out = pieces.join('[data]');
  }
  return out;
}
