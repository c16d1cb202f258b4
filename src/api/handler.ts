/**
 * The API at request time, for every runtime: a request is parsed once, then
 * goes through the gate (key, then rate), is found (a stored answer or a
 * join), becomes a reply (status, headers, encoding, ETag, 304) and is logged.
 * When everything it needs is warm the whole pipeline runs synchronously and
 * returns an ApiReply; a cache miss returns a Promise of one.
 */
import { ROUTES, SHAPES, template } from '../routes.ts';
import type { Answer, DataSource } from './answer.ts';
import { ArchiveReader, type ArchiveOptions, DataError } from './archive.ts';
import { Gate, type KeyCheck } from './gate.ts';
import { healthReply } from './health.ts';
import { andThen, isPromise, type Maybe } from './maybe.ts';
import { MESSAGES } from '../messages.ts';
import { type ApiReply, answerReply, errorReply, jsonReply, preflight, REPLIES, toResponse } from './reply.ts';
import type { Manifest } from '../types.ts';
import { type ApiRequest, decode, type Lookup, lookupOf, parseRequest, type RouteMatch } from './request.ts';

export interface ApiOptions extends ArchiveOptions {
  /** Where the built files come from (the edge function passes one per request instead). */
  data?: DataSource;
  /** Who may ask. */
  keys: KeyCheck;
  /** Requests per key per minute (RATE_LIMIT_PER_MINUTE); default 60. */
  rateLimitPerMinute?: number;
  /** Send the precompressed variant the client accepts (the Node server); the edge leaves this to the CDN. */
  compression?: boolean;
  /** One line per request, with the time it was answered (by `now`); the sink redacts secrets where it writes them. */
  log?: (line: string, time?: number) => void;
  /** Clock, for tests. */
  now?: () => number;
  /** Public files (reference page, portal assets), asked only for paths that are not lookups. */
  publicFile?: (request: ApiRequest) => Maybe<ApiReply | null>;
}

/** The service description at `/` for JSON clients; given the manifest, also the years and the source revision it serves. */
export function describeService(manifest?: Pick<Manifest, 'source' | 'yearRange'>) {
  const [first, last] = manifest?.yearRange ?? [1929, 2026];
  return {
    name: 'Film Awards Archive API',
    description: `Every Academy Awards nomination and winner, ${first} to ${last}, keyed by the year each ceremony was held.`,
    ...(manifest ? { source: servedSource(manifest.source) } : {}),
    openapi: '/openapi.json',
    portal: '/portal',
    health: '/health',
    endpoints: ROUTES.map((r) => ({ operationId: r.id, method: 'GET', path: template(r), summary: r.summary, answer: r.answer, ...(r.notFound ? { notFound: r.notFound } : {}) })),
    shapes: SHAPES,
    errors: { 400: 'invalid parameter', 403: MESSAGES.forbidden, 404: 'nothing found', 405: 'method not allowed', 429: 'over the rate limit', 500: MESSAGES.fetchError },
  };
}

/** Which source revision an archive was built from, as the build recorded it (commit and date null when it did not know them). */
export function servedSource(source: Manifest['source']) {
  const revision = source.revision ?? null;
  return { repository: revision?.repository ?? null, commit: revision?.commit ?? null, date: revision?.date ?? null, sha256: source.sha256, nominations: source.rows, sample: source.sample };
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
  now: () => number;
}

/** Everything after the method and the route are known; `now` is when the request arrived. */
function route(s: Stages, request: ApiRequest, source: DataSource | undefined, now: number): Maybe<ApiReply> {
  const parsed = parseRequest(request);
  switch (parsed.kind) {
    case 'preflight':
      return preflight(request);
    case 'method':
      return REPLIES.methodNotAllowed;
    case 'health':
      return healthReply(s.archive, source);
    case 'other':
      return andThen(s.options.publicFile?.(request) ?? null, (file) => file ?? (parsed.root ? description(s, source) : REPLIES.notFound));
    case 'lookup': {
      const refused = s.gate.check(parsed.key === null ? null : decode(parsed.key), now);
      if (isPromise(refused)) return refused.then((r) => r ?? find(s, parsed, request, source));
      return refused ?? find(s, parsed, request, source);
    }
  }
}

function find(s: Stages, m: RouteMatch, request: ApiRequest, source: DataSource | undefined): Maybe<ApiReply> {
  const lookup = lookupOf(m);
  if ('error' in lookup) return errorReply(400, lookup.error);
  if (!source) return REPLIES.fetchError;
  const answer = s.archive.find(source, lookup);
  if (isPromise(answer)) return answer.then((a) => replyTo(s, a, lookup, request, source));
  return replyTo(s, answer, lookup, request, source);
}

function replyTo(s: Stages, answer: Answer | null, lookup: Lookup, request: ApiRequest, source: DataSource): Maybe<ApiReply> {
  return answer ? answerReply(answer, request, !!s.options.compression, source) : NOT_FOUND_OF.get(lookup.route)!;
}

/** A failure becomes section 7's 500; only a data failure is expected, anything else is logged as a fault. */
function failed(s: Stages, request: ApiRequest, error: unknown): ApiReply {
  const what = error instanceof DataError ? 'data error' : 'internal error';
  s.options.log?.(`${what}: ${(error as Error)?.message ?? String(error)} (${request.method} ${request.url})`);
  return REPLIES.fetchError;
}

function finish(s: Stages, request: ApiRequest, out: ApiReply, started: number): ApiReply {
  if (s.options.log) {
    const ended = s.now();
    s.options.log(`${request.method} ${request.url} ${out.status} ${ended - started}ms`, ended);
  }
  const head = request.method.length === 4 && request.method.toUpperCase() === 'HEAD';
  return out.body && head ? { ...out, body: null } : out;
}

/** The pipeline: an ApiReply at once when warm, a Promise of one on a cache miss; never a rejection. */
function reply(s: Stages, request: ApiRequest, source: DataSource | undefined): Maybe<ApiReply> {
  const started = s.now();
  let out: Maybe<ApiReply>;
  try {
    out = route(s, request, source, started);
  } catch (error) {
    out = failed(s, request, error);
  }
  if (!isPromise(out)) return finish(s, request, out, started);
  return out.then(
    (done) => finish(s, request, done, started),
    (error: unknown) => finish(s, request, failed(s, request, error), started),
  );
}

export function createApi(options: ApiOptions) {
  const now = options.now ?? Date.now;
  const stages: Stages = {
    options,
    now,
    gate: new Gate({ keys: options.keys, perMinute: options.rateLimitPerMinute, now }),
    archive: new ArchiveReader(options),
  };
  return {
    /** Runs the pipeline on a request, over `source` (default: the one given at creation). */
    reply: (request: ApiRequest, source: DataSource | undefined = options.data) => reply(stages, request, source),
    /** The fetch-style entry (edge function, Deno): Request in, Response out. */
    async handle(request: Request, source?: DataSource): Promise<Response> {
      return toResponse(await reply(stages, { method: request.method, url: request.url, header: (n) => request.headers.get(n) }, source ?? options.data));
    },
    limiter: stages.gate.limiter,
    archive: stages.archive,
  };
}

export type Api = ReturnType<typeof createApi>;
