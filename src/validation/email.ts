import { z } from '../openapi/zod.js';
import { text } from './text.js';

/** An email address field that may be cleared: an empty string means "none", as in a cleared form field. */
export const optionalEmailField = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? null : v),
  text({ max: 255, trim: true })
    .pipe(z.email({ message: 'Must be an email address' }))
    .nullable(),
);
