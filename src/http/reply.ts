/**
 * Replies: JSON errors and descriptions, and stored answers as stored, with
 * their ETag and a 304 when the client already holds them (an encoding is a
 * transport's: see `ApiReply.encodable`). Shared by the API pipeline and the
 * key portal. Nothing here reads files or knows a runtime.
 */
import type { Answer, StoredStream } from '../store/answer.ts';
import { limitText, MESSAGES } from '../shared/messages.ts';

export interface ApiReply {
  status: number;
  headers: Record<string, string>;
  /** Null for HEAD, 204 and 304, and when `stream` holds the body. */
  body: Uint8Array | null;
  /** The body as a stream instead, only where the DataSource streams (see `DataSource.stream`). */
  stream?: ReadableStream<Uint8Array>;
  /**
   * Set on a 200 or 304 of an answer a transport may compress (the Node
   * server does, adapters/_node/encoding.ts; the CDNs compress at their
   * edge): the answer's bytes (kept for HEAD too, whose body is null; null
   * on a 304). Its ETag names these bytes, the one form of the answer.
   */
  encodable?: { bytes: Uint8Array | null };
}

/** An ApiReply as a fetch Response (the edge function, the Netlify portal function, the Worker). */
export const toResponse = (reply: ApiReply): Response =>
  new Response(reply.stream ?? (reply.body as Uint8Array<ArrayBuffer> | null), {
    status: reply.status,
    headers: reply.headers,
  });

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

export const errorReply = (status: number, error: string, headers?: Record<string, string>) =>
  jsonReply(status, { error }, headers);

/** The error replies whose bytes never change, made once: replies are never modified after they are made. */
export const REPLIES = {
  forbidden: errorReply(403, MESSAGES.forbidden),
  notFound: errorReply(404, MESSAGES.notFound),
  methodNotAllowed: errorReply(405, MESSAGES.methodNotAllowed, { allow: ALLOWED_METHODS }),
  fetchError: errorReply(500, MESSAGES.fetchError),
} as const;

/** Section 7's 429: the limit and the seconds left, in the body and in Retry-After. */
export const tooMany = (perMinute: number, retryAfter: number) =>
  jsonReply(
    429,
    { error: MESSAGES.tooMany, limit: limitText(perMinute), retryAfter },
    { 'retry-after': String(retryAfter) },
  );

export function preflight(requestHeaders: string | null): ApiReply {
  const headers = {
    ...CORS,
    'access-control-allow-methods': ALLOWED_METHODS,
    'access-control-allow-headers': requestHeaders || '*',
    'access-control-max-age': '86400',
    allow: ALLOWED_METHODS,
  };
  return { status: 204, headers, body: null };
}

/**
 * The reply to a stored answer the store found (`body` or `stream`; neither
 * when the client holds it: a 304), its ETag the id of its bytes.
 * `encodable`: a transport may compress it.
 */
export function answerReply(
  answer: Answer,
  read: { body?: Uint8Array; stream?: StoredStream },
  encodable: boolean,
  cacheControl = DATA_CACHE_CONTROL,
): ApiReply {
  const headers: Record<string, string> = {
    'access-control-allow-origin': CORS['access-control-allow-origin'],
    'content-type': JSON_TYPE,
    'cache-control': cacheControl,
    etag: answer.etag,
  };
  if (read.stream) return streamed(headers, read.stream);
  if (!read.body) return { status: 304, headers, body: null, ...(encodable ? { encodable: { bytes: null } } : {}) };
  const reply = withBody(headers, read.body);
  return encodable ? { ...reply, encodable: { bytes: read.body } } : reply;
}

/** A 200 of a stored file streamed. */
function streamed(headers: Record<string, string>, { body, length }: StoredStream): ApiReply {
  if (length !== null) headers['content-length'] = String(length);
  return { status: 200, headers, body: null, stream: body };
}

function withBody(headers: Record<string, string>, body: Uint8Array): ApiReply {
  headers['content-length'] = String(body.length);
  return { status: 200, headers, body };
}

/** Content types of the dataset's files, by their name's ending. */
const DATASET_TYPES: Record<string, string> = {
  sqlite: 'application/vnd.sqlite3',
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

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
 * A dataset file: as any stored answer (its ETag, a 304), never compressed
 * (so that a `Range` applies to the file as stored), with its own content
 * type and name, or, for a `Range` (whose If-Range, when sent, names this
 * file), cut to the range.
 */
export function datasetReply(
  answer: Answer,
  name: string,
  read: { body?: Uint8Array; stream?: StoredStream },
  range: string | null,
  ifRange: string | null,
  cacheControl = DATA_CACHE_CONTROL,
): ApiReply {
  const own = {
    'content-type': DATASET_TYPES[name.slice(name.lastIndexOf('.') + 1)],
    'accept-ranges': 'bytes',
    'content-disposition': `attachment; filename="${name}"`,
  };
  const ranged = range && (!ifRange || ifRange.trim() === answer.etag) && read.body;
  if (!ranged) {
    const whole = answerReply(answer, read, false, cacheControl);
    return { ...whole, headers: { ...whole.headers, ...own } };
  }
  return rangeReply({ ...CORS, 'cache-control': cacheControl, etag: answer.etag, ...own }, range, read.body!);
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
    return {
      status: 416,
      headers: { ...bare, 'content-range': `bytes */${bytes.length}`, 'content-length': '0' },
      body: new Uint8Array(0),
    };
  }
  const reply = withBody(
    { ...headers, 'content-range': `bytes ${at[0]}-${at[1] - 1}/${bytes.length}` },
    bytes.subarray(at[0], at[1]),
  );
  return { ...reply, status: 206 };
}
