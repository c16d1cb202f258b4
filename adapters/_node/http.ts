/**
 * Node's http at the edges of the front door: its incoming request as the
 * core reads it (headers, client address, and a body read only when the
 * portal asks, never past its size limit nor for longer than
 * `BODY_TIMEOUT_MS`), and the one place an ApiReply is written to Node's response.
 */
import type http from 'node:http';
import { Readable } from 'node:stream';
import type { ApiReply } from '../../src/http/reply.ts';
import type { ApiRequest } from '../../src/http/request.ts';
import { BODY_TIMEOUT_MS } from '../../src/shared/limits.ts';
import { PORTAL_MESSAGES } from '../../src/shared/messages.ts';
import { BodyTimeoutError, type PortalOptions } from '../../src/portal/portal.ts';
import type { Keys } from '../../src/keys/rules.ts';
import { clientAddress, type TrustedProxies } from './client-address.ts';
import { answerTags } from './encoding.ts';

/** How the server reads a request beyond its headers. */
export interface NodeRequestOptions {
  /** How long a portal request's body may take, ms; default 10 s. */
  bodyTimeoutMs?: number;
  /** Proxies whose `X-Forwarded-For` names the client (TRUSTED_PROXIES, ./client-address.ts); default none. */
  trustedProxies?: TrustedProxies;
}

/** What `createNodeServer` (adapters/node.ts) is given. */
export interface ServerOptions extends NodeRequestOptions {
  /** The built output folder. */
  dist: string;
  /** The SQLite key database (KEYS_DB), opened unless `keys` is given. */
  keysDb?: string;
  /** Use these keys instead of opening `keysDb` (npm start shares one instance with the code that issues keys). */
  keys?: Keys;
  /** Longest time to receive a request's headers and body, ms; default 10 s. */
  requestTimeoutMs?: number;
  rateLimitPerMinute?: number;
  /** How often cached files are checked against the disk, ms. */
  revalidateMs?: number;
  /**
   * The log sink: lines come free of secrets; its `warn`, when
   * it has one, takes warnings (a failed purge), else stderr.
   */
  log?: ((line: string, time?: number) => void) & { warn?(line: string): void };
  /** The key portal's mailer and settings, over this server's keys; without it `/portal/...` is 404. */
  portal?: Omit<PortalOptions, 'keys' | 'log' | 'now'>;
  /**
   * A shared cache's purge hook (CACHE_PURGE_URL): answers to a good key
   * are then marked for it, and purged (adapters/_node/cache-watch.ts).
   */
  cachePurgeUrl?: string;
}

/**
 * Reads at most `maxBytes` of a Node request body within `timeoutMs`: null
 * when there is more, a `BodyTimeoutError` when it is too slow (the reply then
 * closes the connection rather than read on).
 */
export function readBody(
  req: http.IncomingMessage,
  maxBytes: number,
  timeoutMs = BODY_TIMEOUT_MS,
): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const timer = setTimeout(() => {
      done();
      req.pause();
      reject(new BodyTimeoutError(PORTAL_MESSAGES.timeout));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      done();
      req.pause();
      resolve(null);
    };
    const onEnd = () => {
      done();
      resolve(new Uint8Array(Buffer.concat(chunks)));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** Node's request as an ApiRequest: a small class rather than an object of closures, made on every request. */
export class NodeRequest implements ApiRequest {
  readonly method: string;
  readonly url: string;
  private readonly req: http.IncomingMessage;
  private readonly options: NodeRequestOptions;

  constructor(req: http.IncomingMessage, options: NodeRequestOptions = {}) {
    this.req = req;
    this.options = options;
    this.method = req.method ?? 'GET';
    this.url = req.url ?? '/';
  }

  /** A header as sent; If-None-Match with the tags of compressed copies read as their answer's (./encoding.ts). */
  header(name: string): string | undefined {
    const v = this.req.headers[name];
    const value = Array.isArray(v) ? v.join(', ') : v;
    return name === 'if-none-match' ? answerTags(value) : value;
  }

  get clientIp(): string {
    const peer = this.req.socket.remoteAddress;
    return peer ? clientAddress(peer, this.header('x-forwarded-for'), this.options.trustedProxies ?? null) : 'unknown';
  }

  body(maxBytes: number): Promise<Uint8Array | null> {
    return readBody(this.req, maxBytes, this.options.bodyTimeoutMs);
  }
}

/**
 * Whether a request still has body bytes on their way that nobody
 * read (refused as too large, too slow, or never asked for).
 */
function bodyLeft(req: http.IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Writes a reply; the bytes (a Buffer when they come from disk) go to the socket
 * as they are. A body left unread closes the connection rather than be read on.
 */
export function writeReply(req: http.IncomingMessage, res: http.ServerResponse, reply: ApiReply): void {
  res.writeHead(reply.status, bodyLeft(req) ? { ...reply.headers, connection: 'close' } : reply.headers);
  if (reply.stream)
    Readable.fromWeb(reply.stream as never).pipe(res); // from a DataSource that streams (none on Node today)
  else res.end(reply.body ?? undefined);
}
