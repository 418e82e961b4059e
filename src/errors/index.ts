export * from './app-error.js';
export { fromZodError, formatPath } from './zod.js';
