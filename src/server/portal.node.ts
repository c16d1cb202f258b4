/**
 * The key portal on the Node server: Node's request and response around the
 * portal core, with the body read only for the portal's own paths and never
 * past the size limit.
 */
import type http from 'node:http';
import type { Keys } from '../keys.ts';
import { createPortal, isPortalPath, type PortalOptions } from '../portal.ts';
import { toApiRequest, writeReply } from './http.node.ts';

/** Handles a request when it is the portal's (returns true), or leaves it alone (false). */
export type NodePortal = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

/** Reads at most `maxBytes` of a Node request body; null (and the connection closed after the reply) when there is more. */
function readBody(req: http.IncomingMessage, maxBytes: number): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.off('data', onData);
        req.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(size > maxBytes ? null : new Uint8Array(Buffer.concat(chunks))));
    req.on('error', reject);
  });
}

export function nodePortal(keys: Keys, options: Omit<PortalOptions, 'keys'> = {}): NodePortal {
  const portal = createPortal({ ...options, keys });
  return (req, res) => {
    // Every API request passes here first: only a URL naming the portal is worth parsing.
    if (!req.url?.includes('portal')) return false;
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://localhost').pathname;
    } catch {
      return false;
    }
    if (!isPortalPath(pathname)) return false;
    let tooLarge = false;
    portal
      .reply({
        ...toApiRequest(req),
        clientIp: req.socket.remoteAddress ?? 'unknown',
        body: async (maxBytes) => {
          const body = await readBody(req, maxBytes);
          tooLarge = body === null;
          return body;
        },
      })
      .then(
        (out) => {
          // A refused body may still be arriving: answer, then close the connection rather than read the rest.
          if (tooLarge || (out!.status === 413 && !req.readableEnded)) out!.headers.connection = 'close';
          writeReply(res, out!);
        },
        () => {
          res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
          res.end('{"error":"Key service unavailable: try again in a minute"}');
        },
      );
    return true;
  };
}
