/**
 * The service's numbers in one place: how many requests a key may make, how
 * long sign-in links and sessions live, how many links an address may ask
 * for, how large and how slow a request body may be. The rules (src/keys/rules.ts,
 * src/portal/portal.ts, src/api/gate.ts) and the messages that state them
 * (src/shared/messages.ts) read them from here, and `wholeNumberSetting` reads the
 * environment variables that change them.
 */

/** Requests per key per minute, per instance, unless RATE_LIMIT_PER_MINUTE says otherwise. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 60;

/** How long a sign-in link works. */
export const TOKEN_TTL_MS = 15 * 60_000;
/** How long a portal session lasts. */
export const SESSION_TTL_MS = 60 * 60_000;
/**
 * Sign-in links mailed to one address per window. The window is short on
 * purpose: whoever asks for links to someone else's address holds its owner
 * off for at most this long, and the per-client limit (DEFAULT_ISSUE_LIMIT)
 * keeps one client from doing it to many addresses.
 */
export const SIGN_INS_PER_WINDOW = 5;
export const SIGN_IN_WINDOW_MS = 10 * 60_000;
/** Largest portal request body accepted, bytes. */
export const MAX_BODY_BYTES = 4096;
/** A portal request's body must have arrived this long after the request began. */
export const BODY_TIMEOUT_MS = 10_000;
/**
 * New sign-in links and new keys per client address per minute, unless PORTAL_ISSUE_LIMIT_PER_MINUTE says otherwise.
 */
export const DEFAULT_ISSUE_LIMIT = 5;
/**
 * A signed-in owner's own key actions (rotate, revoke, account, sign-out) per
 * client address per minute: generous, since none sends mail or adds a key holder.
 */
export const DEFAULT_OWNER_LIMIT = 60;

/** A duration as the portal's mail and messages say it: `15 minutes`, `an hour`, `2 hours`. */
export function inWords(ms: number): string {
  const hours = ms / 3_600_000;
  if (Number.isInteger(hours)) return hours === 1 ? 'an hour' : `${hours} hours`;
  const minutes = Math.round(ms / 60_000);
  return minutes === 1 ? 'a minute' : `${minutes} minutes`;
}

/**
 * A whole-number setting from the environment: `fallback` when unset or blank;
 * a RangeError naming the variable for anything else that is not a whole
 * number from `min` to `max`.
 */
export function wholeNumberSetting(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (value === undefined || value.trim() === '') return fallback;
  const n = Number(value);
  if (Number.isInteger(n) && n >= min && n <= max) return n;
  const range = max === Number.MAX_SAFE_INTEGER ? `from ${min} and up` : `from ${min} to ${max}`;
  throw new RangeError(`Expected ${name} to be a whole number ${range}, got ${JSON.stringify(value)}`);
}

/**
 * The same setting where a runtime cannot refuse to start (an edge function,
 * a Worker): a bad value is told to `warn` and the default used.
 */
export function settingOr(
  warn: (line: string) => void,
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  max?: number,
): number {
  try {
    return wholeNumberSetting(name, value, fallback, min, max);
  } catch (error) {
    warn(`${(error as Error).message}; using ${fallback}`);
    return fallback;
  }
}
