// Measures the three ceilings only (no Sluice server): a way to try the harness and to see what
// this machine and its load generators can do.
import type { CeilingOnly } from '../types.js';

const scenario: CeilingOnly = {
  description: 'uWS hello world (GET), uWS JSON echo (POST) and a constant-response grpc-js server',
  ceilingsOnly: ['uws-hello', 'uws-echo', 'grpc-constant'],
};

export default scenario;
