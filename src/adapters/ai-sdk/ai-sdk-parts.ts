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
