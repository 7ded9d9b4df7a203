export { type MemoryArchiveSession, type MemoryStorage, memoryStorage } from './memory-storage.js';
