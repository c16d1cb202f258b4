/** Talking to a server on loopback: raw requests and request lines, decoded bodies, free ports, and polling until something holds. */
import http from 'node:http';
import { type AddressInfo, connect } from 'node:net';
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

/** One HTTP request with the body as sent (no decompression), path sent verbatim; sent again once on a new connection when a kept-alive one was lost ({@link lostKeptAliveSocket}). */
export function rawRequest(port: number, method: string, pathname: string, headers: Record<string, string> = {}, again = true): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: pathname, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', (error) => (again && lostKeptAliveSocket(req, method, error) ? rawRequest(port, method, pathname, headers, false).then(resolve, reject) : reject(error)));
    req.end();
  });
}

/** One request sent as its raw bytes (the request line as written, no client parsing it); the status and body of the answer. */
export function rawRequestLine(port: number, line: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${line}\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
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

/**
 * A free-looking port below Linux's ephemeral range (32768 and up), so the
 * client sockets of other tests running at once do not take it.
 */
export const randomPort = () => 20_000 + Math.floor(Math.random() * 12_000);

/** A {@link randomPort} that nothing on 127.0.0.1 holds now (tried by listening on it), for a process that takes a port, not 0. */
export async function freeRandomPort(): Promise<number> {
  for (;;) {
    const port = randomPort();
    const server = http.createServer();
    const free = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
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

/** A free TCP port on 127.0.0.1 (wrangler dev takes a port, not 0). */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
