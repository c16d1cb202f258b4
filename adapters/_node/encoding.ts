/**
 * The Node server's compression (the CDNs compress at their edge, so the
 * store keeps each answer once, as sent). An answer the core marks
 * encodable (`ApiReply.encodable`) goes out as brotli or gzip when the
 * client accepts it, under its own ETag (`"<id>-br"`, `"<id>-gzip"`): each
 * copy is compressed once, on zlib's thread pool, and kept by that ETag in a
 * cache bounded by bytes; a request arriving while it is made waits for the
 * same copy. The settings are those the build used when it stored copies
 * (gzip 9; brotli 10, 8 under 4 KiB), so the bytes sent did not change.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { ApiReply } from '../../src/http/reply.ts';
import { ByteLru } from '../../src/shared/lru.ts';
import type { Maybe } from '../../src/shared/maybe.ts';

export type Encoding = 'gzip' | 'br';

/** Brotli's quality for an answer: 10 from this many bytes, 8 below (10 made 1 to 4 KiB answers 56 bytes smaller for ten times the CPU). */
export const BROTLI_BEST_FROM = 4096;
/** Bytes of compressed copies kept; the full archive's are about 7 MB. */
export const ENCODED_BYTES = 16 * 1024 * 1024;

const gzip = promisify(zlib.gzip);
const brotli = promisify(zlib.brotliCompress);

/** `bytes` compressed as the build compressed its copies. */
export function compress(bytes: Uint8Array, encoding: Encoding): Promise<Uint8Array> {
  if (encoding === 'gzip') return gzip(bytes, { level: 9 });
  const params = {
    [zlib.constants.BROTLI_PARAM_QUALITY]: bytes.length >= BROTLI_BEST_FROM ? 10 : 8,
    [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
  };
  return brotli(bytes, { params });
}

/** The encoding to send of those a client accepts, by preference of ours (br, then gzip), honouring q=0; null for none. */
export function preferredEncoding(header: string | null | undefined): Encoding | null {
  if (!header) return null;
  let gzipOk = false;
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (q && Number(q.slice(2)) === 0) continue;
    if (name === 'br' || name === '*') return 'br';
    if (name === 'gzip') gzipOk = true;
  }
  return gzipOk ? 'gzip' : null;
}

/** An If-None-Match as the core reads it: each tag of a compressed copy named as its answer (`"<id>-br"` is `"<id>"`). */
export const answerTags = (ifNoneMatch: string | undefined): string | undefined =>
  ifNoneMatch?.replace(/-(?:br|gzip)"/g, '"');

export class Encoder {
  private readonly kept: ByteLru<{ size: number; bytes: Uint8Array }>;
  private readonly making = new Map<string, Promise<Uint8Array>>();

  constructor(maxBytes = ENCODED_BYTES) {
    this.kept = new ByteLru(maxBytes);
  }

  /** Bytes the cache counts now. */
  get bytes(): number {
    return this.kept.bytes;
  }

  /** `reply` as sent to a client accepting `acceptEncoding`: an encodable answer's copy (or its 304) with its ETag; anything else as it is. */
  encode(reply: ApiReply, acceptEncoding: string | undefined): Maybe<ApiReply> {
    if (!reply.encodable) return reply;
    const headers: Record<string, string> = { ...reply.headers, vary: 'Accept-Encoding' };
    const encoding = preferredEncoding(acceptEncoding);
    if (!encoding) return { status: reply.status, headers, body: reply.body };
    const etag = `${headers.etag.slice(0, -1)}-${encoding}"`;
    Object.assign(headers, { etag, 'content-encoding': encoding });
    const plain = reply.encodable.bytes;
    if (!plain) return { status: reply.status, headers, body: null }; // a 304
    const sent = (bytes: Uint8Array): ApiReply => {
      headers['content-length'] = String(bytes.length);
      return { status: reply.status, headers, body: reply.body ? bytes : null }; // a HEAD's body stays null
    };
    const hit = this.kept.get(etag);
    return hit ? sent(hit.bytes) : this.copy(etag, plain, encoding).then(sent);
  }

  /** The copy of `plain` under `etag`, made once however many ask meanwhile. */
  private copy(etag: string, plain: Uint8Array, encoding: Encoding): Promise<Uint8Array> {
    let making = this.making.get(etag);
    if (!making) {
      making = compress(plain, encoding).finally(() => this.making.delete(etag));
      making.then(
        (bytes) => this.kept.set(etag, { size: bytes.length + etag.length * 2, bytes }),
        () => {},
      );
      this.making.set(etag, making);
    }
    return making;
  }
}
