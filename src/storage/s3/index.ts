export { DEFAULT_S3_REQUEST_TIMEOUT_MS, type S3StorageOptions, s3Storage } from './s3-storage.js';
