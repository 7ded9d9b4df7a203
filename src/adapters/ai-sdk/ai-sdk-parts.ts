/** The message and part shapes of both AI SDK formats, as the conversions read them. */

/** A message of either AI SDK format (system content is a string; others are a string or parts). */
export interface AiSdkMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | readonly AiSdkPart[];
  providerOptions?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** A content part of either AI SDK format. */
export interface AiSdkPart {
  type: string;
  text?: string;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: unknown;
  mediaType?: string;
  [key: string]: unknown;
}

/** The text of a tool result output (`text`, `json`, `error-*`, `content`, `execution-denied`). */
export function toolOutputText(output: unknown): string {
  if (output === null || typeof output !== 'object') return output === undefined ? '' : String(output);
  const o = output as { type?: string; value?: unknown; reason?: string };
  switch (o.type) {
    case 'text':
    case 'error-text':
      return String(o.value ?? '');
    case 'json':
    case 'error-json':
      return JSON.stringify(o.value);
    case 'execution-denied':
      return `[execution denied${o.reason ? `: ${o.reason}` : ''}]`;
    case 'content':
      return Array.isArray(o.value)
        ? o.value
            .map((part: { type?: string; text?: string }) =>
              typeof part.text === 'string' ? part.text : `[${part.type}]`,
            )
            .join('\n')
        : '';
    default:
      return JSON.stringify(output);
  }
}

/** A part's text for the manager (media and other parts as a `[type]` placeholder). */
export function partText(part: AiSdkPart): string {
  if (part.type === 'text' || part.type === 'reasoning') return part.text ?? '';
  if (part.type === 'tool-result') return toolOutputText(part.output);
  if (part.type === 'file' || part.type === 'image')
    return `[${part.type}${part.mediaType ? ` ${part.mediaType}` : ''}]`;
  return `[${part.type}]`;
}

/** A message's parts (a string content is one text part). */
export function parts(message: AiSdkMessage): readonly AiSdkPart[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/** A tool message of approval responses only (no result): AI SDK 6's `needsApproval` flow. */
export function approvalsOnly(message: AiSdkMessage | undefined): boolean {
  return (
    message?.role === 'tool' &&
    typeof message.content !== 'string' &&
    message.content.length > 0 &&
    message.content.every((part) => part.type === 'tool-approval-response')
  );
}
