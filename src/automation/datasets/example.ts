// Where promotion of a run (reviews/routes.ts) imports the example builder from; the builder
// itself is datasets/service.ts's createExample.

export { createExample, type ExampleFields } from './service.js';
