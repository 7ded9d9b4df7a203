import type { Llama, LlamaModel } from 'node-llama-cpp';
import { CompactError } from '../../core/errors.js';
import type { Summarizer } from '../../core/summary/summarizer.js';
import { importPeer, toSummarizerError } from '../client-errors.js';
import { createLlmSummarizer, type LlmSummarizerOptions } from '../llm-summarizer.js';

/** Default context size of the local model, in tokens. */
export const DEFAULT_LLAMA_CONTEXT_SIZE = 4096;

/** Options of {@link llamaCppSummarizer}. */
export interface LlamaCppSummarizerOptions extends LlmSummarizerOptions {
  /** Path of a GGUF model file. */
  modelPath: string;
  /**
   * Context size to create, in tokens; also the map-reduce limit (`contextTokens`) unless set.
   * @default 4096
   */
  contextSize?: number;
  /**
   * Sampling seed.
   * @default 42
   */
  seed?: number;
  /**
   * Sampling temperature (0 is greedy decoding).
   * @default 0
   */
  temperature?: number;
  /**
   * CPU threads for generation.
   * @default node-llama-cpp's default
   */
  threads?: number;
  /**
   * Use the GPU. Off by default so behaviour is the same on every machine.
   * @default false
   */
  gpu?: boolean;
  /**
   * A `Llama` instance from `getLlama()` to use.
   * @default `getLlama({ build: 'never', gpu })`: the prebuilt binary, never a source build or download
   */
  llama?: Llama;
  /**
   * Decides whether generated text is a usable summary; unusable output throws
   * `summarizer_failed` so the manager falls back.
   * @default {@link isUsableSummary}
   */
  isUsable?: (text: string) => boolean;
}

/** A local summarizer that can release its model. */
export interface LlamaCppSummarizer extends Summarizer {
  /** Unloads the model (a later call loads it again). */
  dispose(): Promise<void>;
}

/**
 * True when `text` looks like prose a summary could be: not empty, mostly letters, digits,
 * spaces and punctuation, without replacement characters or control codes, and with some words.
 * Random or broken model output (as from a model with random weights) fails it.
 */
export function isUsableSummary(text: string): boolean {
  const trimmed = text.trim();
  if (trimmed.length < 2) return false;
  const chars = [...trimmed];
  const good = chars.filter((char) => /[\p{L}\p{N}\p{P}\p{Zs}\n\t#*+<>=|~`$%^&-]/u.test(char)).length;
  if (good / chars.length < 0.9) return false;
  if (trimmed.includes('\uFFFD')) return false;
  const words = trimmed.match(/\p{L}{2,}/gu) ?? [];
  return words.length >= 1 && words.join('').length / chars.length >= 0.3;
}

/**
 * A fully local summarizer: a GGUF model run in process through `node-llama-cpp` (an optional
 * peer, imported on first use), for histories that must not leave the machine. The binary is
 * loaded with `build: 'never'`, so a missing prebuilt binary fails fast instead of compiling or
 * downloading. Generation is bounded by `maxTokens`, stops on the request's `AbortSignal`, and
 * unusable output throws `summarizer_failed`.
 *
 * @example
 * ```ts
 * const local = resilientSummarizer(llamaCppSummarizer({ modelPath: './models/qwen2.5-1.5b-instruct-q4_k_m.gguf' }));
 * ```
 */
export function llamaCppSummarizer(options: LlamaCppSummarizerOptions): LlamaCppSummarizer {
  const {
    modelPath,
    contextSize = DEFAULT_LLAMA_CONTEXT_SIZE,
    seed = 42,
    temperature = 0,
    threads,
    gpu = false,
    llama: injectedLlama,
    isUsable = isUsableSummary,
    ...llmOptions
  } = options;
  if (!modelPath) throw new CompactError('invalid_config', 'llamaCppSummarizer: modelPath is required');
  const name = `llama-cpp:${modelPath.split(/[\\/]/).pop()}`;
  const loader = modelLoader(name, modelPath, gpu, injectedLlama);
  const summarizer = createLlmSummarizer(
    name,
    async ({ system, user, maxTokens, signal }) => {
      const { module, model } = await loader.load();
      const context = await model.createContext({
        contextSize: Math.min(contextSize, model.trainContextSize),
        ...(threads === undefined ? {} : { threads }),
      });
      try {
        const sequence = context.getSequence();
        const session = new module.LlamaChatSession({ contextSequence: sequence, systemPrompt: system });
        let outputTokens = 0;
        const text = await session
          .prompt(user, {
            maxTokens,
            temperature,
            seed,
            ...(signal === undefined ? {} : { signal }),
            onToken: (tokens) => {
              outputTokens += tokens.length;
            },
          })
          .catch((error: unknown) => {
            throw toSummarizerError(name, error);
          });
        if (!isUsable(text)) {
          throw new CompactError(
            'summarizer_failed',
            `${name}: output is not a usable summary (${text.length} chars)`,
          );
        }
        return {
          text,
          model: name.slice('llama-cpp:'.length),
          usage: { inputTokens: model.tokenize(`${system}\n${user}`).length, outputTokens },
        };
      } finally {
        await context.dispose();
      }
    },
    { contextTokens: contextSize, ...llmOptions },
  );

  return {
    name,
    summarize: (request) => summarizer.summarize(request),
    dispose: () => loader.dispose(),
  };
}

type LoadedModel = { module: typeof import('node-llama-cpp'); model: LlamaModel };

/** Loads the model once on first use (again after a failed load); disposes of it on demand. */
function modelLoader(name: string, modelPath: string, gpu: boolean, injectedLlama: Llama | undefined) {
  let modelPromise: Promise<LoadedModel> | undefined;
  const load = () => {
    modelPromise ??= (async () => {
      const module = await importPeer('node-llama-cpp', () => import('node-llama-cpp'));
      try {
        const llama =
          injectedLlama ??
          (await module.getLlama({
            build: 'never',
            gpu: gpu ? 'auto' : false,
            logLevel: module.LlamaLogLevel.error,
          }));
        const model = await llama.loadModel({ modelPath, ...(gpu ? {} : { gpuLayers: 0 }) });
        return { module, model };
      } catch (error) {
        throw new CompactError(
          'summarizer_failed',
          `${name}: cannot load ${modelPath}: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
    })();
    modelPromise.catch(() => {
      modelPromise = undefined;
    });
    return modelPromise;
  };
  return {
    load,
    async dispose() {
      const loaded = modelPromise;
      modelPromise = undefined;
      if (loaded) await (await loaded).model.dispose();
    },
  };
}
