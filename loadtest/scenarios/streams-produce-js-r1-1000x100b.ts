// Durable produce on JetStream R1, 1000 record(s) of ~100 B per request (see streams-support/jetstream.ts).
import { jetstreamProduceScenario } from './streams-support/jetstream.js';

export default await jetstreamProduceScenario(1000, 100, 1);
