/**
 * Node's http at the edges of the pipeline: its incoming request as the API
 * and the portal read it, and the one place an ApiReply is written to Node's
 * response.
 */
import type http from 'node:http';
import type { ApiReply } from '../api/reply.ts';
import type { ApiRequest } from '../api/request.ts';

export function toApiRequest(req: http.IncomingMessage): ApiRequest {
  return {
    method: req.method ?? 'GET',
    url: req.url ?? '/',
    header: (name) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/** Writes a reply; the bytes (a Buffer when they come from disk) go to the socket as they are. */
export function writeReply(res: http.ServerResponse, reply: ApiReply): void {
  res.writeHead(reply.status, reply.headers);
  res.end(reply.body ?? undefined);
}
