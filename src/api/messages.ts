/**
 * Every message the API answers with, in one place: the request pipeline, the
 * OpenAPI document and the reference page all read them from here. The
 * spec's own (403, the 404s, 429, 500) are word for word section 7's.
 */
import { MAX_NAME_LENGTH } from '../routes.ts';

export const MESSAGES = {
  forbidden: 'Forbidden - Invalid API Key',
  notFound: 'Not Found',
  methodNotAllowed: 'Method Not Allowed',
  fetchError: 'Error fetching data',
  tooMany: 'Too Many Requests',
  badEncoding: 'Invalid path: malformed percent-encoding in a parameter',
  badName: `Invalid name: expected 1 to ${MAX_NAME_LENGTH} characters`,
  badYear: 'Invalid year: expected a whole number, the year the ceremony was held',
} as const;

/** The 429 body's `limit`, as section 7 writes it. */
export const limitText = (perMinute: number) => `${perMinute} requests per minute`;
