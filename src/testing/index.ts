/**
 * `agent-compaction/testing`: what you need to test your own integration without a
 * provider key or a server: provider test servers that speak each wire format, Ariadne
 * and OTLP test receivers, scripted agent models, synthetic sessions, sample events and
 * artifacts. No test runner is needed: the conformance suites, which register `vitest` tests,
 * are in `agent-compaction/testing/conformance`.
 */
export {
  type ConversationEntry,
  isSummarizationRequest,
  type RequestView,
  readRequest,
  requestTokens,
  type ToolLoopHandlerOptions,
  toolLoopHandler,
  toolPairProblems,
} from './agent-model-script.js';
export {
  ARIADNE_MAX_BODY_BYTES,
  type AriadneIssue,
  type AriadneRequest,
  type AriadneSubscription,
  type AriadneTestServer,
  type AriadneTestServerOptions,
  type StoredAriadneEvent,
  startAriadneTestServer,
  subscribeAriadne,
  validateAriadneEvent,
} from './ariadne-test-server.js';
export {
  assertSoundRequest,
  checkSoundRequest,
  type SoundRequestFormat,
  type SoundRequestInput,
  type SoundRequestRule,
  type SoundRequestViolation,
  UnsoundRequestError,
} from './assert-sound-request.js';
export {
  type OtlpRequest,
  type OtlpTestServer,
  type ReceivedSpan,
  startOtlpTestServer,
} from './otlp-test-server.js';
export {
  anthropicMessageBody,
  anthropicMessageEvents,
  chatCompletionBody,
  chatCompletionChunks,
  type ErrorReply,
  type HangReply,
  type ProviderEndpoint,
  type ProviderHandler,
  type ProviderReply,
  type ProviderTestServer,
  type ProviderTestServerOptions,
  type RawReply,
  type RecordedRequest,
  responsesBody,
  responsesEvents,
  type ScriptedReply,
  type ScriptedToolCall,
  startProviderTestServer,
} from './provider-test-server.js';
export type { ReadMessage, ReadRequest } from './request-atoms.js';
export { FORGED_REFS, sampleArtifact } from './sample-artifact.js';
export { type SampleCompactionOptions, sampleCompactionEvents } from './sample-events.js';
export { type SyntheticSessionOptions, seededRandom, syntheticSession } from './synthetic-session.js';
export { type TinyGgufOptions, writeTinyGguf } from './write-tiny-gguf.js';
