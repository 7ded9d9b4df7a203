export * from './provider-test-server.js';
