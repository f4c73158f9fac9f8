// Durable produce, 100 record(s) of ~1024 B per request (see streams-support/setup.ts).
import { produceScenario } from './streams-support/setup.js';

export default produceScenario(100, 1024);
