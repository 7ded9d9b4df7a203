import { register } from 'node:module';

register('./record-loads.mjs', import.meta.url);
