/**
 * The front door, for every runtime: a request is parsed once and everything
 * after that is decided here: preflight, method, the key portal, `/health`,
 * `/` (the reference page for browsers, the service description for JSON
 * clients), public files and the lookups. A lookup goes through the gate (key,
 * then rate), is found (a stored answer, or a search's) and becomes a reply
 * (status, headers, ETag, 304). Each request ends with one access
 * line the front door makes from what it parsed, with the key's id and never
 * its text, so no runtime's log sink can leak a key.
 *
 * A runtime hands in its abilities (where the build's files come from, the
 * key store, the portal's mailer, a clock, a log sink) and gets `reply` (its
 * own request shape in, an ApiReply out: synchronous when everything it needs
 * is warm) and `handle` (a fetch Request in, a Response out).
 */
import { type Lookup, ROUTES, SHAPES, template } from '../shared/routes.ts';
import type { Answer, DataSource } from '../store/answer.ts';
import { ArchiveReader, type ArchiveOptions, DataError, type Found } from '../store/archive.ts';
import { Gate } from './gate.ts';
import { type KeyCheck, KeyStoreUnavailable } from '../keys/contract.ts';
import { keyedPolicy, marked, NEVER_SHARED, neverShared, type SharedHeaders } from '../http/cache.ts';
import { healthReply } from './health.ts';
import { andThen, isPromise, type Maybe } from '../shared/maybe.ts';
import { isKeyShaped, keyId } from '../keys/secrets.ts';
import { MESSAGES } from '../shared/messages.ts';
import { createPortal, type PortalOptions, readLimited } from '../portal/portal.ts';
import { fileReply, publicFile, type PublicFile, wantsHtml } from './public-files.ts';
import { loggable } from '../shared/redact.ts';
import {
  answerReply,
  type ApiReply,
  DATA_CACHE_CONTROL,
  dataCacheControl,
  datasetReply,
  errorReply,
  jsonReply,
  preflight,
  REPLIES,
  toResponse,
} from '../http/reply.ts';
import type { Manifest } from '../shared/types.ts';
import { type ApiRequest, lookupOf, type Parsed, parseRequest, pathnameOf, type RouteMatch } from '../http/request.ts';

export interface ApiOptions extends ArchiveOptions {
  /** Where the built files come from (the edge function passes one per request instead). */
  data?: DataSource;
  /** The reader of the built files, when made beforehand (the Worker readies one as its isolate starts); else made here. */
  archive?: ArchiveReader;
  /** Who may ask. */
  keys: KeyCheck;
  /** Requests per key per minute (RATE_LIMIT_PER_MINUTE); default 60. */
  rateLimitPerMinute?: number;
  /** The log sink: one access line per request, with the time it was answered (by `now`), and failures. Every line is already free of secrets. */
  log?: (line: string, time?: number) => void;
  /** Clock, for tests. */
  now?: () => number;
  /** The key portal (`/portal/...`): its key store and mailer; without it those paths are 404. */
  portal?: Omit<PortalOptions, 'log' | 'now'>;
  /**
   * The shared cache in front, as its adapter tells it what it may keep (src/http/cache.ts):
   * answers to a good key then say so, tagged; the portal and `/health` that they never are.
   */
  sharedCache?: SharedHeaders;
}

/**
 * The service description at `/` for JSON clients; given the
 * manifest, also the years and the source revision it serves.
 */
export function describeService(manifest?: Pick<Manifest, 'source' | 'yearRange'>) {
  const [first, last] = manifest?.yearRange ?? [1929, 2026];
  return {
    name: 'Film Awards Archive API',
    description: `Every Academy Awards nomination and winner, ${first} to ${last}, keyed by the year each ceremony was held.`,
    ...(manifest ? { source: servedSource(manifest.source) } : {}),
    openapi: '/openapi.json',
    portal: '/portal',
    health: '/health',
    endpoints: ROUTES.map((r) => ({
      operationId: r.id,
      method: 'GET',
      path: template(r),
      summary: r.summary,
      answer: r.answer,
      ...(r.notFound ? { notFound: r.notFound } : {}),
    })),
    shapes: SHAPES,
    errors: {
      400: 'invalid parameter',
      403: MESSAGES.forbidden,
      404: 'nothing found',
      405: 'method not allowed',
      429: 'over the rate limit',
      500: MESSAGES.fetchError,
    },
  };
}

/**
 * Which source revision an archive was built from, as the build
 * recorded it (commit and date null when it did not know them).
 */
export function servedSource(source: Manifest['source']) {
  const revision = source.revision ?? null;
  return {
    repository: revision?.repository ?? null,
    commit: revision?.commit ?? null,
    date: revision?.date ?? null,
    sha256: source.sha256,
    nominations: source.rows,
    sample: source.sample,
  };
}

const DESCRIPTION_HEADERS = { 'cache-control': 'public, max-age=3600' };
/** Without a readable manifest: the routes and shapes, without the archive's years and revision. */
const DESCRIPTION = jsonReply(200, describeService(), DESCRIPTION_HEADERS);
const DESCRIPTIONS = new WeakMap<Manifest, ApiReply>();

/** The description of what `source` serves, made once per manifest. */
function description(s: Stages, source: DataSource | undefined): Maybe<ApiReply> {
  const of = (manifest: Manifest) => {
    let reply = DESCRIPTIONS.get(manifest);
    if (!reply) DESCRIPTIONS.set(manifest, (reply = jsonReply(200, describeService(manifest), DESCRIPTION_HEADERS)));
    return reply;
  };
  if (!source) return DESCRIPTION;
  try {
    const manifest = s.archive.manifest(source);
    return isPromise(manifest) ? manifest.then(of, () => DESCRIPTION) : of(manifest);
  } catch {
    return DESCRIPTION;
  }
}

const NOT_FOUND_OF = new Map(ROUTES.map((r) => [r.id, r.notFound ? errorReply(404, r.notFound) : REPLIES.notFound]));

/** The stages of one API instance, shared by the functions below. */
interface Stages {
  options: ApiOptions;
  gate: Gate;
  archive: ArchiveReader;
  portal: ReturnType<typeof createPortal> | null;
  now: () => number;
}

/** Everything after the request was parsed; `now` is when it arrived. */
function route(
  s: Stages,
  request: ApiRequest,
  parsed: Parsed,
  source: DataSource | undefined,
  now: number,
): Maybe<ApiReply> {
  switch (parsed.kind) {
    case 'preflight':
      return preflight(parsed.requestHeaders);
    case 'method':
      return REPLIES.methodNotAllowed;
    case 'health':
      return healthReply(s.archive, source, s.options.keys);
    case 'portal':
      return s.portal ? s.portal.reply(portalRequest(request), parsed.pathname) : REPLIES.notFound;
    case 'root':
      return andThen(
        wantsHtml(request.header('accept'))
          ? andThen(file(source, INDEX), (page) => page ?? description(s, source))
          : description(s, source),
        byAccept,
      );
    case 'other': {
      const named = parsed.pathname === null ? null : publicFile(parsed.pathname);
      if (!named) return REPLIES.notFound;
      // The page at `/` is for browsers only (a JSON client asking for it gets the same 404 as for any other path).
      if (named.path === INDEX.path)
        return wantsHtml(request.header('accept'))
          ? andThen(file(source, named), (reply) => byAccept(reply ?? REPLIES.notFound))
          : byAccept(REPLIES.notFound);
      return andThen(file(source, named), (reply) => reply ?? REPLIES.notFound);
    }
    case 'lookup': {
      // A refusal, or until when the key works (a key in its grace period caps
      // how long the answer may be kept, by browsers and shared caches alike).
      const checked = s.gate.check(parsed.apiKey, now);
      if (isPromise(checked))
        return checked.then((c) => (typeof c === 'number' ? lookup(s, parsed, source, c, now) : c));
      return typeof checked === 'number' ? lookup(s, parsed, source, checked, now) : checked;
    }
  }
}

/** The page at `/`, as any path naming it is read. */
const INDEX = publicFile('/')!;

/**
 * A reply whose body `Accept` chose (the page or the description at `/`),
 * marked so that no shared cache gives it to a client asking for the other.
 */
const byAccept = (reply: ApiReply): ApiReply => ({ ...reply, headers: { ...reply.headers, vary: 'Accept' } });

/** A public file of the build, read through the runtime's data source; null when it has none by that name. */
function file(source: DataSource | undefined, named: PublicFile): Maybe<ApiReply | null> {
  return source ? andThen(source.read(named.path), (bytes) => (bytes ? fileReply(bytes, named.type) : null)) : null;
}

/** The portal's view of a request: the runtime's client address and body where it has them. */
function portalRequest(request: ApiRequest) {
  return {
    method: request.method,
    url: request.url,
    header: (name: string) => request.header(name),
    clientIp: request.clientIp ?? 'unknown',
    body: request.body ? (max: number) => request.body!(max) : async () => new Uint8Array(0),
  };
}

/** A lookup whose key works until `until` (Infinity: no end), asked at `now`: its parameters checked, then one call to the store. */
function lookup(s: Stages, m: RouteMatch, source: DataSource | undefined, until: number, now: number): Maybe<ApiReply> {
  const asked = lookupOf(m);
  if ('error' in asked) return errorReply(400, asked.error);
  if (!source) return REPLIES.fetchError;
  const found = s.archive.answer(source, asked, { ifNoneMatch: m.ifNoneMatch, stream: m.range === null });
  return isPromise(found)
    ? found.then((f) => answered(s, m, asked, f, until, now))
    : answered(s, m, asked, found, until, now);
}

/** The reply to what the store found, marked for the shared cache. */
function answered(s: Stages, m: RouteMatch, asked: Lookup, found: Found, until: number, now: number): Maybe<ApiReply> {
  const { answer } = found;
  const cacheControl = until === Infinity ? DATA_CACHE_CONTROL : dataCacheControl(until, now);
  let reply: ApiReply;
  if (!answer) reply = NOT_FOUND_OF.get(asked.route)!;
  else if (asked.file !== undefined) reply = datasetReply(answer, asked.file, found, m.range, m.ifRange, cacheControl);
  else reply = answerReply(answer, found, encodable(answer, asked.route), cacheControl);
  return forShared(s, m, found.manifest, reply, until, now);
}

/** Lookups whose answers are sent as stored, never compressed: records and dataset files (a `Range` applies to the file as stored). */
const SENT_AS_STORED: ReadonlySet<Lookup['route']> = new Set([
  'filmRecord',
  'peopleRecord',
  'ceremonyRecord',
  'awardRecord',
  'datasetFile',
]);
/** Below this many bytes an answer is sent as it is: compressing it would save too little. */
export const ENCODE_MIN_BYTES = 1024;

/**
 * Whether a transport may compress a stored answer: not a record's or a
 * dataset file's, nor one made at run time (a search's, a join's); a range
 * of a pack of ENCODE_MIN_BYTES or more, and any file of its own (the
 * archive's, a year's or one larger than a pack takes: the build packs the
 * lists), so no answer's size is looked up.
 */
function encodable(answer: Answer, route: Lookup['route']): boolean {
  const range = answer.at?.range;
  return answer.at !== undefined && !SENT_AS_STORED.has(route) && (!range || range[1] - range[0] >= ENCODE_MIN_BYTES);
}

/**
 * A good key's 200, 304 or lookup 404, marked for the shared cache when there
 * is one; anything else as it is. A key that works `until` a time (its grace
 * period) caps the shared lifetime at the seconds it has left, as it caps the browser's.
 */
function forShared(
  s: Stages,
  m: RouteMatch,
  manifest: Manifest,
  reply: ApiReply,
  until: number,
  now: number,
): Maybe<ApiReply> {
  const headers = s.options.sharedCache;
  if (!headers || m.apiKey === null || (reply.status !== 200 && reply.status !== 304 && reply.status !== 404))
    return reply;
  const left = until === Infinity ? Infinity : Math.max(0, Math.floor((until - now) / 1000));
  const policy = keyedPolicy(keyId(m.apiKey), manifest, left);
  return isPromise(policy) ? policy.then((p) => marked(reply, headers, p)) : marked(reply, headers, policy);
}

/** A lookup whose key could not be checked: the store is out of reach (it reconnects by itself). */
const KEYS_UNAVAILABLE = errorReply(503, MESSAGES.keysUnavailable, { 'retry-after': '5' });

/** A failure becomes section 7's 500; only a data failure is expected, anything else is logged as a fault. */
function failed(s: Stages, request: ApiRequest, error: unknown): ApiReply {
  // A key store out of reach decided nothing: 503, as /health says, and the client may try again.
  if (error instanceof KeyStoreUnavailable) {
    s.options.log?.(loggable(`key store unavailable: ${error.message} (${request.method} ${request.url})`));
    return KEYS_UNAVAILABLE;
  }
  const what = error instanceof DataError ? 'data error' : 'internal error';
  s.options.log?.(
    loggable(`${what}: ${(error as Error)?.message ?? String(error)} (${request.method} ${request.url})`),
  );
  return REPLIES.fetchError;
}

/** A key segment (`raw` as sent, `key` decoded) as the log shows it: a key's id, or `...` for any other text. */
function maskedKey(raw: string, key: string | null): string {
  if (raw === '') return '';
  return key !== null && isKeyShaped(key) ? `${keyId(key)}...` : '...';
}

/**
 * The path as the access line shows it: a lookup's parameters as sent
 * and its key's id; any other path with every secret in it masked.
 */
function loggedPath(parsed: Parsed, request: ApiRequest): string {
  // The path parseRequest already read where it kept it (a portal
  // path, any other path), else read again (a preflight, a 405: rare).
  if (parsed.kind !== 'lookup')
    return loggable(('pathname' in parsed ? parsed.pathname : null) ?? pathnameOf(request.url) ?? request.url);
  const { pathname, keyAt, key, apiKey } = parsed;
  // A name may itself hold a key someone pasted: the parameters are
  // masked as any text is; the key segment is never read into the line.
  if (key === null) return loggable(pathname);
  return loggable(pathname.slice(0, keyAt)) + maskedKey(key, apiKey) + pathname.slice(keyAt + key.length);
}

/**
 * A reply no shared cache may keep (the portal, `/health`), said
 * so to the one in front, whatever Cache-Control lets browsers do.
 */
function unshared(headers: SharedHeaders, parsed: Parsed, request: ApiRequest, out: ApiReply): ApiReply {
  const pathname = ('pathname' in parsed ? parsed.pathname : null) ?? pathnameOf(request.url);
  return pathname !== null && neverShared(pathname) ? marked(out, headers, NEVER_SHARED) : out;
}

function finish(s: Stages, request: ApiRequest, parsed: Parsed, out: ApiReply, started: number): ApiReply {
  if (s.options.sharedCache && parsed.kind !== 'lookup') out = unshared(s.options.sharedCache, parsed, request, out);
  if (s.options.log) {
    const ended = s.now();
    s.options.log(`${request.method} ${loggedPath(parsed, request)} ${out.status} ${ended - started}ms`, ended);
  }
  const head = request.method.length === 4 && request.method.toUpperCase() === 'HEAD';
  if (!head || (!out.body && !out.stream)) return out;
  void out.stream?.cancel().catch(() => {}); // HEAD of a streamed answer: the stored file is not wanted
  return {
    status: out.status,
    headers: out.headers,
    body: null,
    ...(out.encodable ? { encodable: out.encodable } : {}),
  };
}

/** The pipeline: an ApiReply at once when warm, a Promise of one on a cache miss; never a rejection. */
function reply(s: Stages, request: ApiRequest, source: DataSource | undefined): Maybe<ApiReply> {
  const started = s.now();
  const parsed = parseRequest(request);
  let out: Maybe<ApiReply>;
  try {
    out = route(s, request, parsed, source, started);
  } catch (error) {
    out = failed(s, request, error);
  }
  if (!isPromise(out)) return finish(s, request, parsed, out, started);
  return out.then(
    (done) => finish(s, request, parsed, done, started),
    (error: unknown) => finish(s, request, parsed, failed(s, request, error), started),
  );
}

/** A fetch Request as the front door reads it; its body is read (bounded) only if the portal asks. */
function fetchRequest(request: Request, clientIp: string | undefined): ApiRequest {
  return {
    method: request.method,
    url: request.url,
    header: (n) => request.headers.get(n),
    clientIp,
    body: (max) => readLimited(request.body, max),
  };
}

export function createApi(options: ApiOptions) {
  const now = options.now ?? Date.now;
  const stages: Stages = {
    options,
    now,
    gate: new Gate({ keys: options.keys, perMinute: options.rateLimitPerMinute, now }),
    archive: options.archive ?? new ArchiveReader(options),
    portal: options.portal
      ? createPortal({ ...options.portal, now, log: options.log && ((line) => options.log!(loggable(line))) })
      : null,
  };
  return {
    /** Runs the pipeline on a request, over `source` (default: the one given at creation). */
    reply: (request: ApiRequest, source: DataSource | undefined = options.data) => reply(stages, request, source),
    /**
     * The fetch-style entry (edge functions, Workers, Deno): Request
     * in, Response out; `clientIp` for the portal's per-client limit.
     */
    async handle(request: Request, source?: DataSource, clientIp?: string): Promise<Response> {
      return toResponse(await reply(stages, fetchRequest(request, clientIp), source ?? options.data));
    },
    limiter: stages.gate.limiter,
    portalLimiter: stages.portal?.limiter,
    archive: stages.archive,
  };
}

export type Api = ReturnType<typeof createApi>;
