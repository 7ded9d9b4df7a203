export { hashSessionId, SESSION_HASH_KEY_ENV } from '../../core/session/hash-session-id.js';
export { type SessionFolderOptions, safeSessionSegment, sessionFolderName } from '../session-path.js';
export { readTranscriptLines, type TranscriptPartHeader } from '../transcript-parts.js';
export { DEFAULT_FS_STORAGE_OPTIONS, type FsStorageOptions, fsStorage } from './fs-storage.js';
