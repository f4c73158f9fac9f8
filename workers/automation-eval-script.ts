// piscina task entry: custom-script evaluators and user regexes (src/automation/evals/script-runner.ts).
export { runPoolTask as default } from '../src/automation/evals/script-runner.js';
