/** Node's incoming request as the core and the portal read it. */
import type http from 'node:http';
import type { ApiRequest } from '../core.ts';

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
