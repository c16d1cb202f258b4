/**
 * Node's http at the edges of the pipeline: its incoming request as the API
 * and the portal read it, and the one place an ApiReply is written to Node's
 * response.
 */
import type http from 'node:http';
import type { ApiReply } from '../api/reply.ts';
import type { ApiRequest } from '../api/request.ts';

/** Node's request as an ApiRequest: a small class rather than an object with a closure, made on every request. */
class NodeRequest implements ApiRequest {
  readonly method: string;
  readonly url: string;
  private readonly req: http.IncomingMessage;

  constructor(req: http.IncomingMessage) {
    this.req = req;
    this.method = req.method ?? 'GET';
    this.url = req.url ?? '/';
  }

  header(name: string): string | undefined {
    const v = this.req.headers[name];
    return Array.isArray(v) ? v.join(', ') : v;
  }
}

export const toApiRequest = (req: http.IncomingMessage): ApiRequest => new NodeRequest(req);

/** Writes a reply; the bytes (a Buffer when they come from disk) go to the socket as they are. */
export function writeReply(res: http.ServerResponse, reply: ApiReply): void {
  res.writeHead(reply.status, reply.headers);
  res.end(reply.body ?? undefined);
}
