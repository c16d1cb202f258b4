/**
 * The API at request time, for every runtime: a request comes in, a reply goes
 * out. Nothing here scans the archive: every answer is bytes the build stored,
 * found through the manifest, a shard of the name index, or (for a category
 * substring matching several names) slices of stored answers joined in archive
 * order. Runtimes plug in where the bytes come from (`DataSource`) and who may
 * ask (`KeyStore`).
 */
import type { KeyStore } from './keys.ts';
import { redactLine } from './redact.ts';
import { ByteLru } from './lru.ts';
import { RateLimiter } from './rate-limit.ts';
import { dataPath, type Encoding, MANIFEST_PATH, parseRef, sha256Hex, shardOf } from './refs.ts';
import { MAX_NAME_LENGTH, type Param, type Route, ROUTES, template } from './routes.ts';
import type { FileRef, Manifest, Shard } from './types.ts';

/** Reads a file from the built output (paths relative to dist/); null when it is not there. */
export interface DataSource {
  read(path: string): Promise<Uint8Array | null>;
}

export interface ApiOptions {
  /** Where the built files come from (the edge function passes one per request instead). */
  data?: DataSource;
  /** Who may ask. */
  keys: KeyStore;
  /** Requests per key per minute (RATE_LIMIT_PER_MINUTE); default 60. */
  rateLimitPerMinute?: number;
  /** Send the precompressed variant the client accepts (the Node server); the edge leaves this to the CDN. */
  compression?: boolean;
  /** Log line per request, with keys redacted; default none. */
  log?: (line: string) => void;
  /** Clock, for tests. */
  now?: () => number;
  /** Bytes of joined category answers kept in memory; default 32 MiB. */
  joinCacheBytes?: number;
  /**
   * How long a finished answer (200 or 404) is reused for the same lookup and
   * accepted encodings, behind the same key check and rate limit; default
   * 1000 ms, the Node data source's revalidation time, so a file that goes
   * missing is still noticed as fast. 0 turns it off.
   */
  replyMemoMs?: number;
  /** Public files (reference page, portal assets), tried only for paths that are not API routes. */
  extra?: (request: ApiRequest) => Promise<ApiReply | null> | ApiReply | null;
}

/** What the core needs of a request. */
export interface ApiRequest {
  method: string;
  /** Path and query as sent, or a full URL. */
  url: string;
  /** A request header by lower-case name. */
  header(name: string): string | null | undefined;
}

export interface ApiReply {
  status: number;
  headers: Record<string, string>;
  /** Null for HEAD, 204 and 304. */
  body: Uint8Array | null;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';
/** Clients may keep answers a day; `private` keeps shared caches from serving a key-gated answer to someone else. */
export const DATA_CACHE_CONTROL = 'private, max-age=86400';

export const MESSAGES = {
  forbidden: 'Forbidden - Invalid API Key',
  notFound: 'Not Found',
  methodNotAllowed: 'Method Not Allowed',
  fetchError: 'Error fetching data',
  tooMany: 'Too Many Requests',
  badEncoding: 'Invalid path: malformed percent-encoding in a parameter',
  badName: `Invalid name: expected 1 to ${MAX_NAME_LENGTH} characters`,
  badYear: (range: [number, number]) => `Invalid year: expected an integer from ${range[0]} to ${range[1]}`,
} as const;

const encoder = new TextEncoder();
const BASE_HEADERS = { 'access-control-allow-origin': '*' };

export function jsonReply(status: number, value: unknown, headers: Record<string, string> = {}): ApiReply {
  const body = encoder.encode(JSON.stringify(value));
  return {
    status,
    headers: { ...BASE_HEADERS, 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'content-length': String(body.length), ...headers },
    body,
  };
}

const fixedErrors = new Map<string, ApiReply>();
/** An error reply; the ones without extra headers are built once and shared (nobody mutates a reply). */
function errorReply(status: number, error: string, headers?: Record<string, string>): ApiReply {
  if (headers) return jsonReply(status, { error }, headers);
  const id = `${status} ${error}`;
  let out = fixedErrors.get(id);
  if (!out) {
    out = jsonReply(status, { error });
    if (fixedErrors.size < 64) fixedErrors.set(id, out);
  }
  return out;
}

/** A data failure: the archive file is missing or does not match its hash. */
class DataError extends Error {}

interface Matched {
  route: Route;
  key: string | null;
  raw: Partial<Record<Param, string>>;
}

/**
 * The path of a request URL when it is already in the form WHATWG parsing
 * would give (an origin-form path of plain characters, no dot segments);
 * null when it needs the full parser.
 */
export function plainPathname(url: string): string | null {
  if (url.charCodeAt(0) !== 0x2f || url.charCodeAt(1) === 0x2f) return null; // '//x' would be a host
  let end = url.length;
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x3f || c === 0x23) {
      end = i;
      break;
    }
  }
  const path = url.slice(0, end);
  if (!/^[A-Za-z0-9\-._~%!$&'()*+,;=:@/]*$/.test(path) || /\/(?:\.|%2e)/i.test(path)) return null;
  return path;
}

/** Splits the raw path on `/` first, then matches segments; nothing is decoded yet. */
export function matchRoute(pathname: string): Matched | 'root' | null {
  if (pathname === '/' || pathname === '') return 'root';
  const segments = pathname.split('/').slice(1);
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop(); // one trailing slash is fine
  let key: string | null = null;
  const last = segments[segments.length - 1];
  if (last?.startsWith('apikey=')) {
    key = last.slice('apikey='.length);
    segments.pop();
  }
  const [root, ...rest] = segments;
  for (const route of ROUTES) {
    if (!route.roots.includes(root) || route.params.length !== rest.length) continue;
    const raw: Partial<Record<Param, string>> = {};
    if (route.params.every((p, i) => rest[i].startsWith(`${p}=`) && (raw[p] = rest[i].slice(p.length + 1)) !== undefined)) {
      return { route, key, raw };
    }
  }
  return null;
}

function decode(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** Encodings a client accepts, by preference of ours (br, gzip), honouring q=0. */
export function acceptedEncodings(header: string | null | undefined): Set<Encoding> {
  const accepted = new Set<Encoding>();
  if (!header) return accepted;
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) continue;
    if (name === 'br' || name === 'gzip') accepted.add(name);
    if (name === '*') {
      accepted.add('br');
      accepted.add('gzip');
    }
  }
  return accepted;
}

function etagMatches(header: string | null | undefined, ids: string[]): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => ids.includes(t.trim().replace(/^W\//, '').replaceAll('"', '')));
}

interface Joined {
  size: number;
  body: Uint8Array;
  id: string;
  gzip?: Uint8Array;
  gzipId?: string;
}

/** The service description at `/` for JSON clients. */
export function describeService() {
  return {
    name: 'Film Awards Archive API',
    description: 'Every Academy Awards nomination and winner, 1929 to 2026, keyed by the year each ceremony was held.',
    openapi: '/openapi.json',
    portal: '/portal',
    endpoints: ROUTES.map((r) => ({ operationId: r.id, method: 'GET', path: template(r), summary: r.summary })),
    errors: { 400: 'invalid parameter', 403: MESSAGES.forbidden, 404: 'nothing found', 405: 'method not allowed', 429: 'over the rate limit', 500: MESSAGES.fetchError },
  };
}

export function createApi(options: ApiOptions) {
  const now = options.now ?? Date.now;
  const limiter = new RateLimiter({ limit: options.rateLimitPerMinute ?? 60, now });
  const limitText = `${limiter.limit} requests per minute`;
  const verified = new WeakSet<Uint8Array>();
  const joined = new ByteLru<Joined>(options.joinCacheBytes ?? 32 * 1024 * 1024);
  let manifestCache: { bytes: Uint8Array; manifest: Manifest } | null = null;
  const jsonCache = new WeakMap<Uint8Array, unknown>();
  const replyMemoMs = options.replyMemoMs ?? 1000;
  const memo = new ByteLru<{ size: number; reply: ApiReply; until: number }>(64 * 1024 * 1024, 8192);
  const encodingsCache = new Map<string, Set<Encoding>>();
  /** Raw URL and Accept-Encoding to a memoised reply and the key it came with; expires with the memo entry. */
  const exactMemo = new Map<string, { key: string; reply: ApiReply; until: number }>();

  /** acceptedEncodings, remembered per header value (clients send few distinct ones). */
  function accepted(header: string | null | undefined): Set<Encoding> {
    const value = header ?? '';
    let set = encodingsCache.get(value);
    if (!set) {
      set = acceptedEncodings(value);
      if (encodingsCache.size >= 256) encodingsCache.clear();
      encodingsCache.set(value, set);
    }
    return set;
  }

  /** Asked on every request, never remembered: the store answers at once when it can (no trust window). */
  const keyIsValid = (key: string): boolean | Promise<boolean> => options.keys.verify(key);
  /** True only for a key the store can vouch for synchronously now; a pending answer goes the slow path. */
  const validNow = (key: string): boolean => {
    const valid = keyIsValid(key);
    if (valid === true) return true;
    if (valid !== false) valid.catch(() => {}); // the slow path asks again and handles a failure
    return false;
  };

  async function readVerified(data: DataSource, id: string): Promise<Uint8Array> {
    const path = dataPath(id);
    const bytes = path ? await data.read(path) : null;
    if (!bytes) throw new DataError(`missing ${path}`);
    if (!verified.has(bytes)) {
      if ((await sha256Hex(bytes)).slice(0, id.length) !== id) throw new DataError(`corrupt ${path}`);
      verified.add(bytes);
    }
    return bytes;
  }

  async function loadManifest(data: DataSource): Promise<Manifest> {
    const bytes = await data.read(MANIFEST_PATH);
    if (!bytes) throw new DataError('missing manifest');
    if (manifestCache?.bytes === bytes) return manifestCache.manifest;
    let manifest: Manifest;
    try {
      manifest = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw new DataError('corrupt manifest');
    }
    if (manifest?.format !== 1 || !Array.isArray(manifest.categories)) throw new DataError('unknown manifest format');
    manifestCache = { bytes, manifest };
    return manifest;
  }

  async function readJson<T>(data: DataSource, ref: FileRef): Promise<T> {
    const parsed = parseRef(ref);
    if (!parsed) throw new DataError(`bad ref ${ref}`);
    const bytes = await readVerified(data, parsed.id);
    let value = jsonCache.get(bytes);
    if (value === undefined) {
      try {
        value = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        throw new DataError(`unparsable ${ref}`);
      }
      jsonCache.set(bytes, value);
    }
    return value as T;
  }

  function loadShard(data: DataSource, manifest: Manifest, name: string): Promise<Shard> {
    const ref = manifest.shards[shardOf(name, manifest.shards.length)];
    if (!ref) throw new DataError('no shard for this name');
    return readJson<Shard>(data, ref);
  }

  /** A stored answer, in the best encoding the client accepts. */
  async function stored(data: DataSource, ref: FileRef, request: ApiRequest, head: boolean): Promise<ApiReply> {
    const parsed = parseRef(ref);
    if (!parsed) throw new DataError(`bad ref ${ref}`);
    let encoding: Encoding = 'identity';
    let id = parsed.id;
    if (options.compression && parsed.br) {
      const encodings = accepted(request.header('accept-encoding'));
      if (encodings.has('br')) [encoding, id] = ['br', parsed.br];
      else if (encodings.has('gzip')) [encoding, id] = ['gzip', parsed.gzip!];
    }
    const ids = [parsed.id, parsed.gzip, parsed.br].filter((x): x is string => !!x);
    const headers = dataHeaders(id, encoding, !!parsed.br);
    if (etagMatches(request.header('if-none-match'), ids)) return { status: 304, headers, body: null };
    const body = await readVerified(data, id);
    headers['content-length'] = String(body.length);
    return { status: 200, headers, body: head ? null : body };
  }

  function dataHeaders(id: string, encoding: Encoding, varies: boolean): Record<string, string> {
    const headers: Record<string, string> = {
      ...BASE_HEADERS,
      'content-type': JSON_TYPE,
      'cache-control': DATA_CACHE_CONTROL,
      etag: `"${id}"`,
    };
    if (encoding !== 'identity') headers['content-encoding'] = encoding;
    if (options.compression && varies) headers.vary = 'Accept-Encoding';
    return headers;
  }

  /**
   * Category substring matching several full names: the stored answers of
   * each name are sliced into their elements and merged in archive order
   * (by year, then position in the ceremony). Cached, bounded by bytes.
   */
  async function join(data: DataSource, manifest: Manifest, query: string, year: string | null): Promise<Joined | null> {
    const cacheKey = `${year ?? '*'}\u0000${query}`;
    const hit = joined.get(cacheKey);
    if (hit) return hit;
    const parts: { year: number; pos: number; bytes: Uint8Array }[] = [];
    const y = year === null ? null : Number(year);
    for (const c of manifest.categories) {
      if (!c.name.includes(query)) continue;
      const units = y === null ? c.units : c.units.filter((u) => u[0] === y);
      if (units.length === 0) continue;
      const ref = y === null ? c.all : c.years[year!];
      const bytes = await readVerified(data, parseRef(ref)!.id);
      let at = 1; // within a one-year file the elements sit back to back after '['
      for (const [uy, pos, start, end] of units) {
        const [s, e] = y === null ? [start, end] : [at, at + end - start];
        at += end - start + 1;
        parts.push({ year: uy, pos, bytes: bytes.subarray(s, e) });
      }
    }
    if (parts.length === 0) return null;
    parts.sort((a, b) => a.year - b.year || a.pos - b.pos);
    let size = 2 + parts.length - 1;
    for (const p of parts) size += p.bytes.length;
    const body = new Uint8Array(size);
    let at = 0;
    body[at++] = 0x5b; // [
    parts.forEach((p, i) => {
      if (i > 0) body[at++] = 0x2c; // ,
      body.set(p.bytes, at);
      at += p.bytes.length;
    });
    body[at] = 0x5d; // ]
    const result: Joined = { size: body.length, body, id: (await sha256Hex(body)).slice(0, 20) };
    if (options.compression && body.length >= 1024 && typeof CompressionStream !== 'undefined') {
      const gz = new Uint8Array(await new Response(new Blob([body as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream('gzip'))).arrayBuffer());
      result.gzip = gz;
      result.gzipId = (await sha256Hex(gz)).slice(0, 20);
      result.size += gz.length;
    }
    joined.set(cacheKey, result);
    return result;
  }

  function joinedReply(j: Joined, request: ApiRequest, head: boolean): ApiReply {
    const useGzip = !!j.gzip && accepted(request.header('accept-encoding')).has('gzip');
    const id = useGzip ? j.gzipId! : j.id;
    const headers = dataHeaders(id, useGzip ? 'gzip' : 'identity', !!j.gzip);
    if (etagMatches(request.header('if-none-match'), [j.id, j.gzipId].filter((x): x is string => !!x))) {
      return { status: 304, headers, body: null };
    }
    const body = useGzip ? j.gzip! : j.body;
    headers['content-length'] = String(body.length);
    return { status: 200, headers, body: head ? null : body };
  }

  async function lookup(data: DataSource, m: Matched, request: ApiRequest, head: boolean): Promise<ApiReply> {
    const manifest = await loadManifest(data);
    const values: Partial<Record<Param, string>> = {};
    for (const p of m.route.params) {
      const value = decode(m.raw[p]!);
      if (value === null) return errorReply(400, MESSAGES.badEncoding);
      values[p] = value;
    }
    const { name } = values;
    if (name !== undefined) {
      const length = [...name].length;
      if (length === 0 || length > MAX_NAME_LENGTH) return errorReply(400, MESSAGES.badName);
    }
    let year: string | null = null;
    if (values.year !== undefined) {
      if (!/^[0-9]{1,10}$/.test(values.year)) return errorReply(400, MESSAGES.badYear(manifest.yearRange));
      year = String(Number(values.year));
    }
    const notFound = () => errorReply(404, m.route.notFound);

    switch (m.route.id) {
      case 'allCeremonies':
        return stored(data, manifest.archive, request, head);
      case 'ceremonyByYear': {
        const ref = Object.hasOwn(manifest.years, year!) ? manifest.years[year!] : undefined;
        return ref ? stored(data, ref, request, head) : notFound();
      }
      case 'personByName':
      case 'filmByNameAndYear': {
        const shard = await loadShard(data, manifest, name!);
        const entry = Object.hasOwn(shard, name!) ? shard[name!] : undefined;
        const ref = entry && (year === null ? entry[0] : Object.hasOwn(entry[1], year) ? entry[1][year] : undefined);
        return ref ? stored(data, ref, request, head) : notFound();
      }
      case 'categoryByName':
      case 'categoryByNameAndYear': {
        const matches = manifest.categories.filter((c) => c.name.includes(name!) && (year === null || Object.hasOwn(c.years, year)));
        if (matches.length === 0) return notFound();
        if (matches.length === 1) return stored(data, year === null ? matches[0].all : matches[0].years[year!], request, head);
        const j = await join(data, manifest, name!, year);
        return j ? joinedReply(j, request, head) : notFound();
      }
    }
  }

  async function reply(request: ApiRequest, data: DataSource | undefined = options.data): Promise<ApiReply> {
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS') {
      return {
        status: 204,
        headers: {
          ...BASE_HEADERS,
          'access-control-allow-methods': ALLOWED_METHODS,
          'access-control-allow-headers': request.header('access-control-request-headers') || '*',
          'access-control-max-age': '86400',
          allow: ALLOWED_METHODS,
        },
        body: null,
      };
    }
    if (method !== 'GET' && method !== 'HEAD') return errorReply(405, MESSAGES.methodNotAllowed, { allow: ALLOWED_METHODS });
    const head = method === 'HEAD';
    const out = await route(request, data, head);
    return head ? { ...out, body: null } : out;
  }

  async function route(request: ApiRequest, data: DataSource | undefined, head: boolean): Promise<ApiReply> {
    // Normalised the WHATWG way in every runtime, so Node's raw path and Deno's parsed URL agree.
    let pathname = plainPathname(request.url);
    try {
      pathname ??= new URL(request.url, 'http://localhost').pathname;
    } catch {
      return errorReply(404, MESSAGES.notFound);
    }

    const m = matchRoute(pathname);
    if (m === null || m === 'root') {
      // Public files (reference page, portal) never share a path with the API.
      const extra = options.extra ? await options.extra(request) : null;
      if (extra) return extra;
      if (m === 'root') return jsonReply(200, describeService(), { 'cache-control': 'public, max-age=3600' });
      return errorReply(404, MESSAGES.notFound);
    }

    const key = m.key === null ? null : decode(m.key);
    if (!key || !(await keyIsValid(key))) {
      const forbidden = errorReply(403, MESSAGES.forbidden);
      if (replyMemoMs > 0 && request.method === 'GET' && !request.header('if-none-match')) remember(request, key ?? '', forbidden, now() + replyMemoMs);
      return forbidden;
    }
    const decision = limiter.hit(key);
    if (!decision.ok) return tooMany(decision.retryAfter);
    if (!data) return errorReply(500, MESSAGES.fetchError);

    // The same lookup asked again within replyMemoMs: the finished reply, as it was.
    const memoKey = replyMemoMs > 0 && !request.header('if-none-match') ? memoKeyOf(m, request) : '';
    if (memoKey) {
      const hit = memo.peek(memoKey);
      if (hit && hit.until > now()) return hit.reply;
    }
    try {
      const out = await lookup(data, m, request, head);
      if (memoKey && !head && (out.status === 200 || out.status === 404)) {
        memo.set(memoKey, { size: (out.body?.length ?? 0) + 512, reply: out, until: now() + replyMemoMs });
      }
      return out;
    } catch (error) {
      if (!(error instanceof DataError)) throw error;
      options.log?.(`data error: ${error.message}`);
      return errorReply(500, MESSAGES.fetchError);
    }
  }

  const tooMany = (retryAfter: number) =>
    jsonReply(429, { error: MESSAGES.tooMany, limit: limitText, retryAfter }, { 'retry-after': String(retryAfter) });

  function memoKeyOf(m: Matched, request: ApiRequest): string {
    const enc = options.compression ? accepted(request.header('accept-encoding')) : null;
    let k = m.route.id;
    for (const p of m.route.params) k += `\u0000${m.raw[p]}`;
    return `${k}\u0000${enc?.has('br') ? 'b' : ''}${enc?.has('gzip') ? 'g' : ''}`;
  }

  /**
   * The synchronous fast path: a GET for a lookup answered within
   * replyMemoMs, with a key the store accepts synchronously. Same checks in the
   * same order as `reply` (route, key, rate), minus the awaits; null when any
   * of it would need the slow path, in which case nothing was counted.
   */
  function fastReply(request: ApiRequest): ApiReply | null {
    if (replyMemoMs <= 0 || request.method !== 'GET' || request.header('if-none-match')) return null;
    // Exactly this URL and Accept-Encoding answered within replyMemoMs: skip even the routing.
    const exact = exactMemo.get(exactKeyOf(request));
    if (exact && exact.until > now()) {
      if (exact.reply.status === 403) {
        // The same bad key again: refused before any counting, logged like every request.
        options.log?.(redactLine(`${request.method} ${request.url} 403 0ms`));
        return exact.reply;
      }
      if (validNow(exact.key)) return answerFast(request, exact.key, exact.reply);
    }
    const pathname = plainPathname(request.url);
    if (pathname === null) return null;
    const m = matchRoute(pathname);
    if (m === null || m === 'root' || !m.key || m.key.includes('%')) return null;
    const hit = memo.peek(memoKeyOf(m, request));
    if (!hit || hit.until <= now() || !validNow(m.key)) return null;
    remember(request, m.key, hit.reply, hit.until);
    return answerFast(request, m.key, hit.reply);
  }

  const exactKeyOf = (request: ApiRequest) => `${request.url}\u0000${options.compression ? (request.header('accept-encoding') ?? '') : ''}`;

  function remember(request: ApiRequest, key: string, reply: ApiReply, until: number): void {
    if (exactMemo.size >= 8192) exactMemo.delete(exactMemo.keys().next().value!);
    exactMemo.set(exactKeyOf(request), { key, reply, until });
  }

  function answerFast(request: ApiRequest, key: string, reply: ApiReply): ApiReply {
    const decision = limiter.hit(key);
    const out = decision.ok ? reply : tooMany(decision.retryAfter);
    options.log?.(redactLine(`${request.method} ${request.url} ${out.status} 0ms`));
    return out;
  }

  /** `reply` with a log line (keys redacted) and a 500 instead of a crash. */
  async function safeReply(request: ApiRequest, data?: DataSource): Promise<ApiReply> {
    const fast = fastReply(request);
    if (fast) return fast;
    const started = options.log ? now() : 0;
    let out: ApiReply;
    try {
      out = await reply(request, data);
    } catch (error) {
      options.log?.(redactLine(`internal error on ${request.url}: ${(error as Error).message}`));
      out = errorReply(500, MESSAGES.fetchError);
    }
    options.log?.(redactLine(`${request.method} ${request.url} ${out.status} ${now() - started}ms`));
    return out;
  }

  /** The fetch-style entry: Request in, Response out. */
  async function handle(request: Request, data?: DataSource): Promise<Response> {
    const out = await safeReply({ method: request.method, url: request.url, header: (n) => request.headers.get(n) }, data);
    return new Response(out.body as Uint8Array<ArrayBuffer> | null, { status: out.status, headers: out.headers });
  }

  return { reply: safeReply, fastReply, handle, limiter };
}

export type Api = ReturnType<typeof createApi>;
