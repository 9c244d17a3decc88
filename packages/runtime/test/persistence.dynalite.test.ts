import { dynaliteRuntime } from './emulators.js';
import { persistenceSuite } from './persistenceSuite.js';

const db = dynaliteRuntime();

persistenceSuite('dynalite', () => db.rt);
