export { type S3StorageOptions, s3Storage } from './s3-storage.js';
