/**
 * The developer portal's JSON endpoints, for every runtime (the front door
 * routes `/portal/...` here on every runtime that has keys to give):
 *
 *   POST /portal/sign-in   {"email"}  -> 202 {"message"}, a single-use link mailed
 *   POST /portal/session   {"token"}  -> 200 {"session", "email", "key"}
 *   POST /portal/keys         (Authorization: Bearer <session>) -> 201 {"apiKey"}
 *   POST /portal/keys/rotate  (Bearer) [{"grace": "now"|"1h"|"24h"|"7d"}] -> 200 {"apiKey", "ending"}
 *   POST /portal/keys/end-grace (Bearer) -> 200 {"ended": true}: the old key in its grace period stops now
 *   POST /portal/keys/revoke  (Bearer) -> 200 {"revoked": true}: the current key and the one in grace
 *   POST /portal/account      (Bearer) -> 200 {"email", "key", "ending"}: the page after a reload
 *   POST /portal/sign-out     (Bearer) -> 200 {"signedOut": true}; the session answers 401 from then on
 *
 * Sign-in answers the same for every well-formed address, so it tells nobody
 * whether an address has a key. An `error` field on every failure. The front
 * door (src/api/handler.ts) routes here and writes the access line.
 *
 * No CORS grant on purpose: a browser sends `Content-Type: application/json`
 * or an `Authorization` header across origins only after a preflight, the
 * preflight gets no `access-control-allow-*` headers, and a JSON body is
 * required where there is one (415 otherwise). So only the portal page on the
 * same origin can use these endpoints from a browser.
 */
import { type ApiReply, jsonReply } from '../http/reply.ts';
import type { ApiRequest } from '../http/request.ts';
import { KeyError } from '../keys/contract.ts';
import { graceOf, type Keys } from '../keys/rules.ts';
import { type Mail, noTransport, type SendMail } from './mail.ts';
import {
  BODY_TIMEOUT_MS,
  DEFAULT_ISSUE_LIMIT,
  DEFAULT_OWNER_LIMIT,
  inWords,
  MAX_BODY_BYTES,
  SESSION_TTL_MS,
  SIGN_IN_WINDOW_MS,
  SIGN_INS_PER_WINDOW,
  TOKEN_TTL_MS,
  wholeNumberSetting,
} from '../shared/limits.ts';
import { PORTAL_MESSAGES } from '../shared/messages.ts';
import { RateLimiter } from '../shared/rate-limit.ts';
import { escapeHtml } from '../shared/html.ts';
import { readAtMost } from '../shared/bytes.ts';

export const PORTAL_PATHS = {
  signIn: '/portal/sign-in',
  session: '/portal/session',
  issue: '/portal/keys',
  rotate: '/portal/keys/rotate',
  endGrace: '/portal/keys/end-grace',
  revoke: '/portal/keys/revoke',
  account: '/portal/account',
  signOut: '/portal/sign-out',
} as const;
type Action = keyof typeof PORTAL_PATHS;

export const PORTAL_METHODS = 'POST, OPTIONS';

export interface PortalOptions {
  /** Where keys, tokens and sessions live (the same module the CLI uses). */
  keys: Keys;
  /** Sends the sign-in mail (a `Mailer`'s send, src/portal/mail.ts). */
  sendMail: SendMail;
  /**
   * Origin the mailed link points to (PUBLIC_BASE_URL). Without it, the
   * request's own origin: right behind Netlify, which routes by host; the Node
   * server passes its listen address instead of trusting a Host header.
   */
  publicBaseUrl?: string;
  /** Sign-in links and new keys per client address per minute (PORTAL_ISSUE_LIMIT_PER_MINUTE); default 5. */
  issueLimitPerMinute?: number;
  /** A signed-in owner's rotate, revoke, account and sign-out per client address per minute; default 60. */
  ownerLimitPerMinute?: number;
  /**
   * Takes back the shared cache's answers to the keys rotated away
   * or revoked, by id; never rejects (src/http/cache.ts: purgeKeys).
   */
  purgeKeys?: (ids: string[]) => Promise<unknown>;
  /**
   * Where a failure is told (a mail that could not be sent, a
   * store that failed); the front door writes the access line.
   */
  log?: (line: string) => void;
  /** Clock, for tests. */
  now?: () => number;
}

/**
 * A request as the portal needs it: the core's view, with who sent it
 * and its body (the front door fills in what a runtime leaves out).
 */
export type PortalRequest = ApiRequest & Required<Pick<ApiRequest, 'clientIp' | 'body'>>;

/** The body did not arrive within `BODY_TIMEOUT_MS`. */
export class BodyTimeoutError extends Error {}
/** The sign-in mail could not be handed to the transport (the key store's own failures are not this). */
class MailFailed extends Error {}

/**
 * PORTAL_ISSUE_LIMIT_PER_MINUTE as a number; the default when
 * unset; a clear error for anything but a whole number from 1.
 */
export function issueLimitFrom(value: string | undefined): number {
  return wholeNumberSetting('PORTAL_ISSUE_LIMIT_PER_MINUTE', value, DEFAULT_ISSUE_LIMIT, 1);
}

/** A JSON reply without the API's CORS grant (see the top of this file). */
const portalReply = (status: number, value: unknown, headers: Record<string, string> = {}): ApiReply =>
  jsonReply(status, value, { 'x-content-type-options': 'nosniff', ...headers }, false);

const fail = (status: number, error: string, headers?: Record<string, string>) =>
  portalReply(status, { error }, headers);
const tooMany = (limit: string, retryAfter: number) =>
  portalReply(429, { error: PORTAL_MESSAGES.tooManyLinks, limit, retryAfter }, { 'retry-after': String(retryAfter) });

function actionOf(pathname: string): Action | null {
  const path = pathname.length > 1 && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  for (const [action, p] of Object.entries(PORTAL_PATHS) as [Action, string][]) if (p === path) return action;
  return null;
}

/**
 * Reads a fetch-style body, stopping once it is longer than
 * `maxBytes` (null) or older than `timeoutMs` (a BodyTimeoutError).
 */
export async function readLimited(
  stream: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  timeoutMs = BODY_TIMEOUT_MS,
): Promise<Uint8Array | null> {
  if (!stream) return new Uint8Array(0);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BodyTimeoutError(PORTAL_MESSAGES.timeout)), timeoutMs);
  });
  try {
    return await readAtMost(stream, maxBytes, late);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The JSON object a request carries, or the reply that refuses it; with `optional`, an empty body (or none) is `{}`.
 */
async function jsonBody(request: PortalRequest, optional = false): Promise<Record<string, unknown> | ApiReply> {
  const type = (request.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json' && !optional) return fail(415, PORTAL_MESSAGES.unsupportedType);
  if (Number(request.header('content-length') ?? 0) > MAX_BODY_BYTES) return fail(413, PORTAL_MESSAGES.tooLarge);
  const bytes = await request.body(MAX_BODY_BYTES);
  if (!bytes) return fail(413, PORTAL_MESSAGES.tooLarge);
  if (optional && bytes.length === 0) return {};
  if (type !== 'application/json') return fail(415, PORTAL_MESSAGES.unsupportedType);
  let input: unknown;
  try {
    input = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return fail(400, PORTAL_MESSAGES.badJson);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return fail(400, PORTAL_MESSAGES.badJson);
  return input as Record<string, unknown>;
}

const isReply = (value: object): value is ApiReply => 'status' in value && 'headers' in value && 'body' in value;

/** The session in `Authorization: Bearer <session>`, or null. */
function bearer(request: ApiRequest): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(request.header('authorization') ?? '');
  return m ? m[1] : null;
}

/** The portal's endpoints over one key store, mailer and per-client limiter. */
class PortalEndpoints {
  readonly limiter: RateLimiter;
  /**
   * A signed-in owner's own key actions, counted apart from
   * sign-ins and new keys so managing a key never waits on them.
   */
  readonly ownerLimiter: RateLimiter;
  private readonly keys: Keys;
  private readonly now: () => number;
  private readonly limitText: string;
  private readonly ownerLimitText: string;
  private readonly options: PortalOptions;

  constructor(options: PortalOptions) {
    this.options = options;
    this.keys = options.keys;
    this.now = options.now ?? Date.now;
    this.limiter = new RateLimiter({ limit: options.issueLimitPerMinute ?? DEFAULT_ISSUE_LIMIT, now: this.now });
    this.limitText = `${this.limiter.limit} sign-in links and new keys per minute per client address`;
    this.ownerLimiter = new RateLimiter({ limit: options.ownerLimitPerMinute ?? DEFAULT_OWNER_LIMIT, now: this.now });
    this.ownerLimitText = `${this.ownerLimiter.limit} key actions per minute per client address`;
  }

  /**
   * Counts one sign-in or new key (or, for `owner`, one of an owner's
   * key actions) against the client's address; the 429 reply when over.
   */
  private overLimit(request: PortalRequest, owner = false): ApiReply | null {
    const decision = (owner ? this.ownerLimiter : this.limiter).hit(request.clientIp || 'unknown');
    return decision.ok ? null : tooMany(owner ? this.ownerLimitText : this.limitText, decision.retryAfter);
  }

  private linkBase(request: PortalRequest): string {
    if (this.options.publicBaseUrl) return this.options.publicBaseUrl.replace(/\/+$/, '');
    return new URL(request.url, 'http://localhost').origin;
  }

  private async signIn(request: PortalRequest): Promise<ApiReply> {
    const body = await jsonBody(request);
    if (isReply(body)) return body;
    if (typeof body.email !== 'string') return fail(400, PORTAL_MESSAGES.badEmail);
    // No transport at all (production without mail settings): say so, never "on its way", and make no link.
    if (this.options.sendMail === noTransport) return fail(503, PORTAL_MESSAGES.noMail);
    const refused = this.overLimit(request);
    if (refused) return refused;
    const base = this.linkBase(request);
    const send = (to: string, token: string) =>
      this.options.sendMail(signInMail(to, `${base}/portal#token=${token}`)).catch((error: Error) => {
        throw new MailFailed(error.message);
      });
    try {
      // A link whose mail was not handed to the transport is taken
      // back: it neither works nor counts against the address.
      await this.keys.signIn(body.email, send);
    } catch (error) {
      if (!(error instanceof MailFailed)) throw error;
      this.options.log?.(`portal mail failed: ${error.message}`);
      return fail(503, PORTAL_MESSAGES.mailFailed, { 'retry-after': '60' });
    }
    return portalReply(202, { message: PORTAL_MESSAGES.sent });
  }

  private async session(request: PortalRequest): Promise<ApiReply> {
    const body = await jsonBody(request);
    if (isReply(body)) return body;
    if (typeof body.token !== 'string' || body.token === '') return fail(400, PORTAL_MESSAGES.missingToken);
    return portalReply(200, await this.keys.openSession(body.token.trim()));
  }

  /** A rotation's grace period from its optional body (none, or no `grace`: now), or the reply that refuses it. */
  private async graceOf(request: PortalRequest): Promise<number | ApiReply> {
    const body = await jsonBody(request, true);
    if (isReply(body)) return body;
    if (body.grace === undefined) return 0;
    return graceOf(body.grace) ?? fail(400, PORTAL_MESSAGES.badGrace);
  }

  private async keyAction(
    request: PortalRequest,
    action: 'issue' | 'rotate' | 'revoke' | 'endGrace',
  ): Promise<ApiReply> {
    const email = await this.keys.sessionEmail(bearer(request));
    const refused = this.overLimit(request, action !== 'issue');
    if (refused) return refused;
    if (action === 'issue') return portalReply(201, { apiKey: await this.keys.issue(email) });
    if (action === 'revoke') {
      await this.purge(await this.keys.revoke(email));
      return portalReply(200, { revoked: true });
    }
    if (action === 'endGrace') {
      await this.purge(await this.keys.endGrace(email));
      return portalReply(200, { ended: true });
    }
    const grace = await this.graceOf(request);
    if (typeof grace !== 'number') return grace;
    const { key, stopped } = await this.keys.rotate(email, grace);
    await this.purge(stopped);
    return portalReply(200, { apiKey: key, ending: grace > 0 ? await this.keys.endingKey(email) : null });
  }

  /**
   * Takes back the shared cache's answers to every key a rotate, revoke or
   * end-grace stopped, by id (the store keeps no key); a rotate's old key
   * even in its grace period, since its answers, kept before, would outlive its end.
   */
  private async purge(stopped: string[]): Promise<void> {
    await this.options.purgeKeys?.(stopped);
  }

  private async answer(request: PortalRequest, action: Action): Promise<ApiReply> {
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS')
      return { status: 204, headers: { allow: PORTAL_METHODS, 'cache-control': 'no-store' }, body: null };
    if (method !== 'POST') return fail(405, PORTAL_MESSAGES.methodNotAllowed, { allow: PORTAL_METHODS });
    try {
      if (action === 'signIn') return await this.signIn(request);
      if (action === 'session') return await this.session(request);
      // An owner's limit counts owners: the session is checked first, so posts without one (401) never use it up.
      if (action === 'account' || action === 'signOut') await this.keys.sessionEmail(bearer(request));
      if (action === 'account')
        return this.overLimit(request, true) ?? portalReply(200, await this.keys.account(bearer(request)));
      if (action === 'signOut') {
        const refused = this.overLimit(request, true);
        if (refused) return refused;
        await this.keys.signOut(bearer(request));
        return portalReply(200, { signedOut: true });
      }
      return await this.keyAction(request, action);
    } catch (error) {
      if (error instanceof BodyTimeoutError) return fail(408, PORTAL_MESSAGES.timeout, { connection: 'close' });
      if (!(error instanceof KeyError)) throw error;
      if (error.status === 429)
        return tooMany(
          `${SIGN_INS_PER_WINDOW} sign-in links per ${SIGN_IN_WINDOW_MS === 3_600_000 ? 'hour' : inWords(SIGN_IN_WINDOW_MS)} per e-mail address`,
          error.retryAfter ?? 60,
        );
      return fail(error.status, error.message);
    }
  }

  /**
   * The reply to a request on one of the portal's paths (the front door has parsed it); a store that fails is a 503.
   */
  async reply(request: PortalRequest, pathname: string): Promise<ApiReply> {
    const action = actionOf(pathname);
    try {
      return action ? await this.answer(request, action) : fail(404, PORTAL_MESSAGES.notFound);
    } catch (error) {
      this.options.log?.(`portal error on ${request.method} ${pathname}: ${(error as Error).message}`);
      return fail(503, PORTAL_MESSAGES.unavailable, { 'retry-after': '60' });
    }
  }
}

export function createPortal(options: PortalOptions) {
  const portal = new PortalEndpoints(options);
  return {
    reply: (request: PortalRequest, pathname: string) => portal.reply(request, pathname),
    limiter: portal.limiter,
  };
}

/** The sign-in mail, as text and as the same words in HTML. */
function signInMail(to: string, link: string): Mail {
  const before = 'Open this link to get, rotate or revoke your Film Awards Archive API key:';
  const after = [
    `It works once, within ${inWords(TOKEN_TTL_MS)}, and signs you in for ${inWords(SESSION_TTL_MS)}.`,
    'If you did not ask for it, ignore this mail: nothing happens without the link.',
  ];
  return {
    to,
    subject: 'Your sign-in link: Film Awards Archive API',
    text: [before, '', link, '', ...after, ''].join('\n'),
    html: [
      `<p>${escapeHtml(before)}</p>`,
      `<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`,
      ...after.map((p) => `<p>${escapeHtml(p)}</p>`),
    ].join('\n'),
  };
}

export type Portal = ReturnType<typeof createPortal>;
