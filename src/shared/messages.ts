/**
 * Every message the service answers with, in one place: the API pipeline,
 * the key rules, the portal, the OpenAPI document and the reference page all
 * read them from here. The API's own (403, the 404s, 429, 500) are word for
 * word the spec's section 7.
 */
import { BODY_TIMEOUT_MS, inWords, MAX_BODY_BYTES, TOKEN_TTL_MS } from './limits.ts';
import { ID_FORMS, MAX_NAME_LENGTH, MAX_SEARCH_LENGTH } from './routes.ts';

export const MESSAGES = {
  forbidden: 'Forbidden - Invalid API Key',
  notFound: 'Not Found',
  methodNotAllowed: 'Method Not Allowed',
  fetchError: 'Error fetching data',
  tooMany: 'Too Many Requests',
  badEncoding: 'Invalid path: malformed percent-encoding in a parameter',
  badName: `Invalid name: expected 1 to ${MAX_NAME_LENGTH} characters`,
  badSearch: `Invalid name: expected 1 to ${MAX_SEARCH_LENGTH} characters of text to search for`,
  badYear: 'Invalid year: expected a whole number, the year the ceremony was held',
  /** `/health` when the archive cannot be read. */
  unavailable: 'Service Unavailable: the archive cannot be read',
  /** `/health` when the key store cannot answer key checks (every keyed request would fail). */
  keysUnavailable: 'Service Unavailable: the key store cannot be read',
  badTitleId: `Invalid title id: expected ${ID_FORMS.titleById.expected}`,
  badNameId: `Invalid name id: expected ${ID_FORMS.nameById.expected}`,
  badAwardId: `Invalid award id: expected ${ID_FORMS.awardRecord.expected}`,
  badFileName:
    'Invalid file: expected a name from the dataset list, such as oscars.sqlite, oscars.ndjson or nominations.csv',
} as const;

/** The 429 body's `limit`, as section 7 writes it. */
export const limitText = (perMinute: number) => `${perMinute} requests per minute`;

/** What the key rules refuse with (src/keys/rules.ts), as the portal and the CLI say it. */
export const KEY_MESSAGES = {
  badEmail: 'Invalid email: expected an address like name@example.org',
  controlInEmail:
    'Invalid email: control and format characters (such as NUL, ESC, DEL, U+0085 or U+202E) are not allowed in an address',
  forbidden: MESSAGES.forbidden,
  badToken: 'This sign-in link is used, expired or unknown: ask for a new one',
  badSession: 'Not signed in, or the session expired: open a new sign-in link',
  hasKey: 'This address already has an active key: rotate it to get a new one',
  noKey: 'This address has no active key: get one with POST /portal/keys',
  noEnding: 'This address has no old key in a grace period: nothing to stop',
  tooManyLinks: MESSAGES.tooMany,
} as const;

/** The portal's answers (src/portal/portal.ts), its refusals of a request's shape included. */
export const PORTAL_MESSAGES = {
  ...KEY_MESSAGES,
  notFound: MESSAGES.notFound,
  methodNotAllowed: 'Method Not Allowed: use POST',
  unsupportedType: 'Unsupported Media Type: send Content-Type: application/json',
  tooLarge: `Payload Too Large: the body may be at most ${MAX_BODY_BYTES} bytes`,
  timeout: `Request Timeout: the body must arrive within ${BODY_TIMEOUT_MS / 1000} s`,
  badJson: 'Invalid JSON: expected an object such as {"email": "name@example.org"}',
  badGrace: 'Invalid grace: expected {"grace": "now"}, "1h", "24h" or "7d" (how long the old key goes on working)',
  missingToken: 'Invalid body: expected {"token": "<the token from your sign-in link>"}',
  sent: `If that address can receive mail, a sign-in link is on its way. It works once, within ${inWords(TOKEN_TTL_MS)}.`,
  mailFailed: 'Could not send the sign-in mail: try again in a minute',
  noMail:
    'Sign-in by e-mail is not set up on this server (it has no mail transport): keys cannot be had here until its operator sets one',
  unavailable: 'Key service unavailable: try again in a minute',
} as const;
