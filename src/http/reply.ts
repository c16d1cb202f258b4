/**
 * Replies: JSON errors and descriptions, and stored answers in the encoding a
 * client accepts, with their ETag and a 304 when the client already holds
 * them. Shared by the API pipeline and the key portal. Nothing here reads
 * files or knows a runtime.
 */
import type { Answer, StoredStream } from '../store/answer.ts';
import type { Encoding } from '../store/refs.ts';
import { limitText, MESSAGES } from '../shared/messages.ts';
import type { ApiRequest } from './request.ts';

export interface ApiReply {
  status: number;
  headers: Record<string, string>;
  /** Null for HEAD, 204 and 304, and when `stream` holds the body. */
  body: Uint8Array | null;
  /** The body as a stream instead, only where the DataSource streams (see `DataSource.stream`). */
  stream?: ReadableStream<Uint8Array>;
}

/** An ApiReply as a fetch Response (the edge function, the Netlify portal function, the Worker). */
export const toResponse = (reply: ApiReply): Response =>
  new Response(reply.stream ?? (reply.body as Uint8Array<ArrayBuffer> | null), { status: reply.status, headers: reply.headers });

export const JSON_TYPE = 'application/json; charset=utf-8';
export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';
/** How long clients may keep an answer, seconds: a day. */
export const DATA_MAX_AGE = 86_400;
/** Clients may keep answers a day; `private` keeps shared caches from serving a key-gated answer to someone else. */
export const DATA_CACHE_CONTROL = `private, max-age=${DATA_MAX_AGE}`;

/**
 * The Cache-Control of an answer given at `now` for a key that works until
 * `until` (ms; Infinity: no end): a day, or the whole seconds left when its
 * key ends sooner (a rotated key in its grace period), so no answer for it is
 * kept past its end; `private` keeps every shared cache from keeping it at all.
 */
export function dataCacheControl(until: number, now: number): string {
  const left = (until - now) / 1000;
  return left >= DATA_MAX_AGE ? DATA_CACHE_CONTROL : `private, max-age=${Math.max(0, Math.floor(left))}`;
}
/** What every API reply and public file grants other origins. */
export const CORS = { 'access-control-allow-origin': '*' } as const;

const encoder = new TextEncoder();

/** A JSON reply, not to be stored; `cors: false` for the portal, which grants other origins nothing. */
export function jsonReply(status: number, value: unknown, headers: Record<string, string> = {}, cors = true): ApiReply {
  const body = encoder.encode(JSON.stringify(value));
  const base = { 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'content-length': String(body.length) };
  return { status, headers: cors ? { ...CORS, ...base, ...headers } : { ...base, ...headers }, body };
}

export const errorReply = (status: number, error: string, headers?: Record<string, string>) => jsonReply(status, { error }, headers);

/** The error replies whose bytes never change, made once: replies are never modified after they are made. */
export const REPLIES = {
  forbidden: errorReply(403, MESSAGES.forbidden),
  notFound: errorReply(404, MESSAGES.notFound),
  methodNotAllowed: errorReply(405, MESSAGES.methodNotAllowed, { allow: ALLOWED_METHODS }),
  fetchError: errorReply(500, MESSAGES.fetchError),
} as const;

/** Section 7's 429: the limit and the seconds left, in the body and in Retry-After. */
export const tooMany = (perMinute: number, retryAfter: number) =>
  jsonReply(429, { error: MESSAGES.tooMany, limit: limitText(perMinute), retryAfter }, { 'retry-after': String(retryAfter) });

export function preflight(request: ApiRequest): ApiReply {
  const headers = {
    ...CORS,
    'access-control-allow-methods': ALLOWED_METHODS,
    'access-control-allow-headers': request.header('access-control-request-headers') || '*',
    'access-control-max-age': '86400',
    allow: ALLOWED_METHODS,
  };
  return { status: 204, headers, body: null };
}

const NONE: ReadonlySet<Encoding> = new Set();

/** Encodings a client accepts, by preference of ours (br, gzip), honouring q=0. */
export function acceptedEncodings(header: string | null | undefined): ReadonlySet<Encoding> {
  if (!header) return NONE;
  const accepted = new Set<Encoding>();
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

/** Whether If-None-Match names one of `ids` (any encoding of the same answer). */
export function etagMatches(header: string | null | undefined, ids: (string | undefined)[]): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => ids.includes(tag.trim().replace(/^W\//, '').replaceAll('"', '')));
}

/** The variant to send: the best one both we hold and the client accepts, when we compress at all. */
function chooseEncoding(answer: Answer, request: ApiRequest, compression: boolean): Encoding {
  if (!compression || (!answer.ids.br && !answer.ids.gzip)) return 'identity';
  const accepted = acceptedEncodings(request.header('accept-encoding'));
  if (answer.ids.br && accepted.has('br')) return 'br';
  if (answer.ids.gzip && accepted.has('gzip')) return 'gzip';
  return 'identity';
}

/**
 * What to send of an answer: the encoding whose bytes the archive is to
 * read, with the reply's headers, and for a dataset file's `Range` the one
 * asked (applied once the bytes are read).
 */
export interface Sending {
  encoding: Encoding;
  headers: Record<string, string>;
  range?: string;
}

/**
 * A 304 when the client already holds the answer; else the encoding
 * to send and its headers (ETag: the id of the bytes sent).
 */
export function chooseAnswer(answer: Answer, request: ApiRequest, compression: boolean, cacheControl = DATA_CACHE_CONTROL): ApiReply | Sending {
  const encoding = chooseEncoding(answer, request, compression);
  const headers: Record<string, string> = {
    'access-control-allow-origin': CORS['access-control-allow-origin'],
    'content-type': JSON_TYPE,
    'cache-control': cacheControl,
    etag: answer.etags[encoding]!,
  };
  if (encoding !== 'identity') headers['content-encoding'] = encoding;
  if (compression && (answer.ids.br || answer.ids.gzip)) headers.vary = 'Accept-Encoding';
  const ifNoneMatch = request.header('if-none-match');
  if (ifNoneMatch && etagMatches(ifNoneMatch, Object.values(answer.ids))) return { status: 304, headers, body: null };
  return { encoding, headers };
}

/**
 * The 200 of `sending` with the bytes the archive read (or, for a dataset file's `Range`, the 206 or 416 they give).
 */
export function sent(sending: Sending, body: Uint8Array): ApiReply {
  return sending.range === undefined ? withBody(sending.headers, body) : rangeReply(sending.headers, sending.range, body);
}

/** The 200 of `sending` with the stored file streamed. */
export function streamed(sending: Sending, { body, length }: StoredStream): ApiReply {
  const headers = sending.headers;
  if (length !== null) headers['content-length'] = String(length);
  return { status: 200, headers, body: null, stream: body };
}

function withBody(headers: Record<string, string>, body: Uint8Array): ApiReply {
  headers['content-length'] = String(body.length);
  return { status: 200, headers, body };
}

/** Content types of the dataset's files, by their name's ending. */
const DATASET_TYPES: Record<string, string> = { sqlite: 'application/vnd.sqlite3', ndjson: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8; header=present' };

/**
 * The byte range a `Range` header asks of a file of `size` bytes: [start,
 * end) when it names one satisfiable range, 'unsatisfiable' when its one
 * range starts past the end, null to send the whole file (no header, a
 * malformed one or several ranges, which RFC 9110 lets a server ignore).
 */
export function byteRange(header: string | null | undefined, size: number): [number, number] | 'unsatisfiable' | null {
  const m = header ? /^bytes=(\d{0,16})-(\d{0,16})$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  // `bytes=-N`: the last N bytes
  if (m[1] === '') return Number(m[2]) === 0 ? 'unsatisfiable' : [Math.max(0, size - Number(m[2])), size];
  const start = Number(m[1]);
  const end = m[2] === '' ? size : Math.min(size, Number(m[2]) + 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  return start >= size ? 'unsatisfiable' : [start, end];
}

/**
 * A dataset file: as any stored answer (its ETag, a 304, the compressed copy
 * the client accepts) with its own content type and name, or, for a `Range`
 * (whose If-Range, when sent, names this file), the file as stored,
 * uncompressed, to be cut to the range once read (`sent`).
 */
export function chooseDatasetFile(answer: Answer, name: string, request: ApiRequest, compression: boolean, cacheControl = DATA_CACHE_CONTROL): ApiReply | Sending {
  const own = { 'content-type': DATASET_TYPES[name.slice(name.lastIndexOf('.') + 1)], 'accept-ranges': 'bytes', 'content-disposition': `attachment; filename="${name}"` };
  const range = request.header('range');
  const ifRange = request.header('if-range');
  const ranged = range && (!ifRange || ifRange.trim() === answer.etags.identity) && !etagMatches(request.header('if-none-match'), Object.values(answer.ids));
  if (!ranged) {
    const chosen = chooseAnswer(answer, request, compression, cacheControl);
    return { ...chosen, headers: { ...chosen.headers, ...own } };
  }
  const headers: Record<string, string> = { ...CORS, 'cache-control': cacheControl, etag: answer.etags.identity, ...own };
  if (compression && (answer.ids.br || answer.ids.gzip)) headers.vary = 'Accept-Encoding';
  return { encoding: 'identity', headers, range };
}

/**
 * The 206 of the bytes `range` asks of `bytes`, a 416 for a range past
 * their end, or a 200 of them all for a range a server may ignore.
 */
function rangeReply(headers: Record<string, string>, range: string, bytes: Uint8Array): ApiReply {
  const at = byteRange(range, bytes.length);
  if (at === null) return withBody(headers, bytes);
  if (at === 'unsatisfiable') {
    const { 'content-type': _, ...bare } = headers; // no body, so no type
    return { status: 416, headers: { ...bare, 'content-range': `bytes */${bytes.length}`, 'content-length': '0' }, body: new Uint8Array(0) };
  }
  const reply = withBody({ ...headers, 'content-range': `bytes ${at[0]}-${at[1] - 1}/${bytes.length}` }, bytes.subarray(at[0], at[1]));
  return { ...reply, status: 206 };
}
