/**
 * The key portal on the Node server: Node's request and response around the
 * portal core, with the body read only for the portal's own paths, never past
 * the size limit, and never for longer than `BODY_TIMEOUT_MS`.
 */
import type http from 'node:http';
import type { Keys } from '../keys.ts';
import { jsonReply } from '../api/reply.ts';
import { BODY_TIMEOUT_MS } from '../limits.ts';
import { PORTAL_MESSAGES } from '../messages.ts';
import { BodyTimeoutError, createPortal, isPortalPath, type PortalOptions } from '../portal.ts';
import { toApiRequest, writeReply } from './http.node.ts';


/** Handles a request when it is the portal's (returns true), or leaves it alone (false). */
export type NodePortal = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/**
 * Reads at most `maxBytes` of a Node request body within `timeoutMs`: null
 * when there is more, a `BodyTimeoutError` when it is too slow (the reply then
 * closes the connection rather than read on).
 */
export function readBody(req: http.IncomingMessage, maxBytes: number, timeoutMs = BODY_TIMEOUT_MS): Promise<Uint8Array | null> {
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

export interface NodePortalOptions extends Omit<PortalOptions, 'keys'> {
  /** How long a body may take; default `BODY_TIMEOUT_MS` (10 s). */
  bodyTimeoutMs?: number;
}

export function nodePortal(keys: Keys, options: NodePortalOptions): NodePortal {
  const portal = createPortal({ ...options, keys });
  return (req, res) => {
    // Every API request passes here first: only a URL naming the portal is worth parsing.
    if (!req.url?.startsWith('/portal/')) return false;
    let pathname: string;
    try {
      pathname = new URL(req.url, 'http://localhost').pathname;
    } catch {
      return false;
    }
    if (!isPortalPath(pathname)) return false;
    let unread = false;
    portal
      .reply(
        Object.assign(toApiRequest(req), {
          clientIp: req.socket.remoteAddress ?? 'unknown',
          body: async (maxBytes: number) => {
            unread = true;
            const body = await readBody(req, maxBytes, options.bodyTimeoutMs);
            unread = body === null;
            return body;
          },
        }),
      )
      .then(
        (out) => {
          // A refused or late body may still be arriving: answer, then close the connection rather than read the rest.
          if (unread || !req.complete) out!.headers.connection = 'close';
          writeReply(res, out!);
        },
        () => writeReply(res, jsonReply(500, { error: PORTAL_MESSAGES.unavailable }, { connection: 'close' }, false)),
      );
    return true;
  };
}
