export { DEFAULT_FS_STORAGE_OPTIONS, type FsStorageOptions, fsStorage } from './fs-storage.js';
