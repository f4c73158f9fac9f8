// Durable produce, 100 record(s) of ~100 B per request (see streams-support/setup.ts).
import { produceScenario } from './streams-support/setup.js';

export default produceScenario(100, 100);
