import type { PutObjectCommandInput, S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { CompactError } from '../../core/errors.js';
import { assertWriteNotAborted } from '../write-signal.js';

type S3Sdk = typeof import('@aws-sdk/client-s3');

/** The options {@link S3Objects} reads (those of `s3Storage`). */
export interface S3ObjectOptions {
  bucket: string;
  kmsKeyId?: string | undefined;
  client?: S3Client | undefined;
  region?: string | undefined;
  endpoint?: string | undefined;
  forcePathStyle?: boolean | undefined;
  /** The time limit of one request, in milliseconds. */
  requestTimeoutMs: number;
}

/** A failed S3 call as `storage_failed`, naming what it did. */
function storageFailed(what: string, error: unknown): CompactError {
  return new CompactError('storage_failed', `s3: could not ${what}: ${(error as Error).message}`, {
    cause: error,
  });
}

/**
 * The bucket's objects as `s3Storage` uses them, through the S3 SDK (an optional peer, loaded
 * on the first call; a failed load is tried again on the next).
 */
export class S3Objects {
  readonly #options: S3ObjectOptions;
  #loading: Promise<{ client: S3Client; sdk: S3Sdk }> | undefined;
  readonly #pending = new Set<Promise<unknown>>();

  constructor(options: S3ObjectOptions) {
    this.#options = options;
  }

  /**
   * Writes `body` at `key` (SSE-KMS when configured) and returns its `s3://` location. An
   * aborted `signal` aborts the request (the SDK's `abortSignal`), as its time limit does.
   */
  async put(key: string, body: string, contentType: string, signal?: AbortSignal): Promise<string> {
    const { bucket, kmsKeyId } = this.#options;
    assertWriteNotAborted(signal, `s3: put s3://${bucket}/${key}`);
    const { client, sdk } = await this.#load();
    const input: PutObjectCommandInput = {
      Bucket: bucket,
      Key: key,
      Body: body,
      ContentType: contentType,
      ContentLength: Buffer.byteLength(body),
    };
    if (kmsKeyId !== undefined) {
      input.ServerSideEncryption = 'aws:kms';
      input.SSEKMSKeyId = kmsKeyId;
    }
    const request = client.send(new sdk.PutObjectCommand(input), this.#limit(signal));
    this.#pending.add(request);
    try {
      await request;
    } catch (error) {
      throw storageFailed(`put s3://${bucket}/${key}`, error);
    } finally {
      this.#pending.delete(request);
    }
    return `s3://${bucket}/${key}`;
  }

  /** Reads one object's text; `undefined` when it does not exist. */
  async get(key: string): Promise<string | undefined> {
    const { client, sdk } = await this.#load();
    const { bucket } = this.#options;
    try {
      const object = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }), this.#limit());
      return (await object.Body?.transformToString('utf8')) ?? '';
    } catch (error) {
      const name = (error as { name?: string })?.name;
      const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
      if (name === 'NoSuchKey' || name === 'NotFound' || status === 404) return undefined;
      throw storageFailed(`get s3://${bucket}/${key}`, error);
    }
  }

  /** Every key under `folder/` (or starting with `folder` when `exactPrefix`), all pages. */
  async listKeys(folder: string, exactPrefix = false): Promise<string[]> {
    const { client, sdk } = await this.#load();
    const { bucket } = this.#options;
    const keys: string[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await client.send(
          new sdk.ListObjectsV2Command({
            Bucket: bucket,
            Prefix: exactPrefix ? folder : `${folder}/`,
            ...(token ? { ContinuationToken: token } : {}),
          }),
          this.#limit(),
        );
        for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (error) {
      throw storageFailed(`list s3://${bucket}/${folder}/`, error);
    }
    return keys;
  }

  /**
   * One request's time limit (a stalled server or network is given up on, never waited for),
   * and the caller's `signal` when it gave one.
   */
  #limit(signal?: AbortSignal): { abortSignal: AbortSignal } {
    const timeout = AbortSignal.timeout(this.#options.requestTimeoutMs);
    return { abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout };
  }

  /** Waits for the writes in flight (each settles within its time limit). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }

  #load(): Promise<{ client: S3Client; sdk: S3Sdk }> {
    if (this.#loading) return this.#loading;
    const loading = this.#connect();
    this.#loading = loading;
    loading.catch(() => {
      if (this.#loading === loading) this.#loading = undefined;
    });
    return loading;
  }

  async #connect(): Promise<{ client: S3Client; sdk: S3Sdk }> {
    let sdk: S3Sdk;
    try {
      sdk = await import('@aws-sdk/client-s3');
    } catch (error) {
      throw new CompactError('missing_dependency', 'install @aws-sdk/client-s3: npm i @aws-sdk/client-s3', {
        cause: error,
      });
    }
    const { client, region, endpoint, forcePathStyle } = this.#options;
    if (client) return { client, sdk };
    const config: S3ClientConfig = {};
    if (region !== undefined) config.region = region;
    if (endpoint !== undefined) config.endpoint = endpoint;
    if (forcePathStyle !== undefined) config.forcePathStyle = forcePathStyle;
    return { client: new sdk.S3Client(config), sdk };
  }
}
