/**
 * The self-service key portal's endpoints, for every runtime: a key for an
 * e-mail address, a new key for a working one, a key revoked. JSON in and out,
 * an `error` field on every failure, and never a key or an e-mail address in a
 * log line.
 *
 * No CORS grant on purpose: a browser sends `Content-Type: application/json`
 * across origins only after a preflight, the preflight gets no
 * `access-control-allow-*` headers, and any other Content-Type is refused
 * (415). So only the portal page on the same origin can use these endpoints
 * from a browser.
 */
import { type ApiReply, jsonReply } from './api/reply.ts';
import type { ApiRequest } from './api/request.ts';
import { isEmail, KeyError, type Keys } from './keys.ts';
import { RateLimiter } from './rate-limit.ts';

export const PORTAL_PATHS = {
  issue: '/portal/keys',
  rotate: '/portal/keys/rotate',
  revoke: '/portal/keys/revoke',
} as const;
type Action = keyof typeof PORTAL_PATHS;

/** Largest request body accepted, bytes. */
export const MAX_BODY_BYTES = 4096;
export const PORTAL_METHODS = 'POST, OPTIONS';

export const PORTAL_MESSAGES = {
  notFound: 'Not Found',
  methodNotAllowed: 'Method Not Allowed: use POST with a JSON body',
  unsupportedType: 'Unsupported Media Type: send Content-Type: application/json',
  tooLarge: `Payload Too Large: the body may be at most ${MAX_BODY_BYTES} bytes`,
  badJson: 'Invalid JSON: expected an object such as {"email": "name@example.org"}',
  badEmail: 'Invalid email: expected an address like name@example.org',
  missingKey: 'Invalid body: expected {"apiKey": "<your current key>"}',
  forbidden: 'Forbidden - Invalid API Key',
  tooMany: 'Too Many Requests',
  unavailable: 'Key service unavailable: try again in a minute',
} as const;

export interface PortalOptions {
  /** Where keys are issued, rotated and revoked (the same module the CLI uses). */
  keys: Keys;
  /** New keys (issued or rotated) per client IP per minute; default 5. */
  issueLimitPerMinute?: number;
  /** One line per request: method, path, status; never a key or an address. */
  log?: (line: string) => void;
  /** Clock, for tests. */
  now?: () => number;
}

/** A request as the portal needs it: the core's view, plus who sent it and its body. */
export interface PortalRequest extends ApiRequest {
  /** The client's address, for the per-IP limit on new keys. */
  clientIp: string;
  /** The body's bytes, or null as soon as more than `maxBytes` arrived. */
  body(maxBytes: number): Promise<Uint8Array | null>;
}

/** Whether a path belongs to the portal's endpoints (everything under /portal/keys). */
export function isPortalPath(pathname: string): boolean {
  return pathname === PORTAL_PATHS.issue || pathname.startsWith(`${PORTAL_PATHS.issue}/`);
}

/** The core's JSON reply without its CORS grant (see the top of this file). */
function portalReply(status: number, value: unknown, headers: Record<string, string> = {}): ApiReply {
  const out = jsonReply(status, value, { 'x-content-type-options': 'nosniff', ...headers });
  delete out.headers['access-control-allow-origin'];
  return out;
}

const fail = (status: number, error: string, headers?: Record<string, string>) => portalReply(status, { error }, headers);

function actionOf(pathname: string): Action | null {
  const path = pathname.length > PORTAL_PATHS.issue.length && pathname.endsWith('/') ? pathname.slice(0, -1) : pathname;
  for (const [action, p] of Object.entries(PORTAL_PATHS) as [Action, string][]) if (p === path) return action;
  return null;
}

/** Reads a fetch-style body, stopping once it is longer than `maxBytes`. */
export async function readLimited(stream: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array | null> {
  if (!stream) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  return body;
}

export function createPortal(options: PortalOptions) {
  const { keys } = options;
  const limiter = new RateLimiter({ limit: options.issueLimitPerMinute ?? 5, now: options.now });
  const limitText = `${limiter.limit} new keys per minute per address`;

  async function answer(request: PortalRequest, action: Action): Promise<ApiReply> {
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS') return { status: 204, headers: { allow: PORTAL_METHODS, 'cache-control': 'no-store' }, body: null };
    if (method !== 'POST') return fail(405, PORTAL_MESSAGES.methodNotAllowed, { allow: PORTAL_METHODS });

    const type = (request.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/json') return fail(415, PORTAL_MESSAGES.unsupportedType);
    const declared = Number(request.header('content-length') ?? 0);
    if (declared > MAX_BODY_BYTES) return fail(413, PORTAL_MESSAGES.tooLarge);

    const bytes = await request.body(MAX_BODY_BYTES);
    if (!bytes) return fail(413, PORTAL_MESSAGES.tooLarge);
    let input: unknown;
    try {
      input = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    } catch {
      return fail(400, PORTAL_MESSAGES.badJson);
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return fail(400, PORTAL_MESSAGES.badJson);
    const fields = input as Record<string, unknown>;

    if (action === 'issue' ? !isEmail(fields.email) : typeof fields.apiKey !== 'string' || fields.apiKey === '') {
      return fail(400, action === 'issue' ? PORTAL_MESSAGES.badEmail : PORTAL_MESSAGES.missingKey);
    }

    // Issuing and rotating both hand out a new key: both count against the per-IP limit. A
    // malformed request has cost nothing yet and does not count; every request that reaches the
    // store does, so asking address after address (409 or 201) is limited too.
    if (action !== 'revoke') {
      const decision = limiter.hit(request.clientIp || 'unknown');
      if (!decision.ok) {
        return portalReply(
          429,
          { error: PORTAL_MESSAGES.tooMany, limit: limitText, retryAfter: decision.retryAfter },
          { 'retry-after': String(decision.retryAfter) },
        );
      }
    }

    try {
      if (action === 'issue') return portalReply(201, { apiKey: await keys.issue(fields.email as string) });
      const current = (fields.apiKey as string).trim();
      if (action === 'rotate') return portalReply(200, { apiKey: await keys.rotate(current) });
      await keys.revoke(current);
      return portalReply(200, { revoked: true });
    } catch (error) {
      if (error instanceof KeyError) return fail(error.status, error.status === 403 ? PORTAL_MESSAGES.forbidden : error.message);
      throw error;
    }
  }

  /** The portal's reply, or null when the path is not the portal's (so the caller can try other routes). */
  async function reply(request: PortalRequest): Promise<ApiReply | null> {
    let pathname: string;
    try {
      pathname = new URL(request.url, 'http://localhost').pathname;
    } catch {
      return null;
    }
    if (!isPortalPath(pathname)) return null;
    const action = actionOf(pathname);
    let out: ApiReply;
    try {
      out = action ? await answer(request, action) : fail(404, PORTAL_MESSAGES.notFound);
    } catch (error) {
      options.log?.(`portal error on ${request.method} ${pathname}: ${(error as Error).message}`);
      out = fail(500, PORTAL_MESSAGES.unavailable);
    }
    options.log?.(`${request.method} ${pathname} ${out.status}`);
    return out;
  }

  /** The fetch-style entry (Netlify Functions, Deno): Request in, Response out; 404 off the portal's paths. */
  async function handle(request: Request, clientIp: string): Promise<Response> {
    const out =
      (await reply({
        method: request.method,
        url: request.url,
        header: (name) => request.headers.get(name),
        clientIp,
        body: (maxBytes) => readLimited(request.body, maxBytes),
      })) ?? fail(404, PORTAL_MESSAGES.notFound);
    return new Response(out.body as Uint8Array<ArrayBuffer> | null, { status: out.status, headers: out.headers });
  }

  return { reply, handle, limiter };
}

export type Portal = ReturnType<typeof createPortal>;
