/**
 * Talking to a server on loopback: raw requests and request lines, decoded
 * bodies, and polling until something holds (a free port: lib/ports.ts).
 */
import http from 'node:http';
import { connect } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

/** A reply body as sent before `content-encoding` (br, gzip or none). */
export function decodedBody(body: Buffer, encoding: string | undefined): Buffer {
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'gzip') return gunzipSync(body);
  return body;
}

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/**
 * Whether a request failed only because the kept-alive connection it reused
 * was being closed by the server as it was sent: the server closes an idle
 * connection after its keep-alive timeout (5 s for Node's), and a client that
 * picked that socket in the same instant gets "socket hang up". RFC 9110
 * (9.2.2) lets a client send an idempotent request again after such a
 * failure, as browsers do; Node's docs give the same recipe
 * (`request.reusedSocket`). Seen on two suites side by side, load 12 on 2 cores.
 */
export const lostKeptAliveSocket = (req: http.ClientRequest, method: string, error: NodeJS.ErrnoException): boolean =>
  req.reusedSocket && error.code === 'ECONNRESET' && ['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());

/**
 * One HTTP request with the body as sent (no decompression), path sent verbatim; sent again
 * once on a new connection when a kept-alive one was lost ({@link lostKeptAliveSocket}).
 */
export function rawRequest(
  port: number,
  method: string,
  pathname: string,
  headers: Record<string, string> = {},
  again = true,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', (error) =>
      again && lostKeptAliveSocket(req, method, error)
        ? rawRequest(port, method, pathname, headers, false).then(resolve, reject)
        : reject(error),
    );
    req.end();
  });
}

/**
 * One request sent as its raw bytes (the request line as written,
 * no client parsing it); the status and body of the answer.
 */
export function rawRequestLine(port: number, line: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`${line}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`),
    );
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error(`no answer to ${line}`)));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const body = text.slice(text.indexOf('\r\n\r\n') + 4);
      // A chunked body: its one chunk.
      resolve({ status, body: /^[0-9a-f]+\r\n/.test(body) ? body.split('\r\n')[1] : body });
    });
  });
}

/** Polls `check` until it returns true or `ms` pass. */
export async function eventually(check: () => Promise<boolean>, ms = 10_000, every = 100): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, every));
  }
  return check();
}
