/**
 * Netlify's local Blobs server (`@netlify/blobs/server`), made as strict as
 * the real service about conditional writes, for `npm run dev:netlify` and
 * the tests. As shipped, it checks `If-Match` / `If-None-Match` and then
 * writes in separate asynchronous steps, its ETag is the file's modification
 * time in milliseconds, and a read answers no ETag at all: two writers racing
 * on one blob can both "win", and a read-then-conditional-write cannot be
 * done. Netlify's service applies a conditional write atomically and answers
 * every read with the ETag of the bytes it sent. So here each blob's writes
 * run one at a time, and the ETag is a hash of the content, sent with every
 * read (every record the key backend writes carries a fresh `rev`, so content
 * never repeats). The key store then behaves as it does on Netlify.
 *
 * Its own `start` listens on every interface; the server here listens on
 * 127.0.0.1 only and hands each request to the Blobs server's handler.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { BlobsServer } from '@netlify/blobs/server';

const etagOf = (bytes: Uint8Array) => `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;
(BlobsServer as unknown as { generateETag(file: string): Promise<string> }).generateETag = async (file) =>
  etagOf(await readFile(file));

type Handler = (req: Request) => Promise<Response>;

/** Reads answer the ETag of exactly the bytes they send. */
function tagReads(server: BlobsServer): void {
  const target = server as unknown as { get: Handler };
  const get = target.get.bind(server);
  target.get = async (req) => {
    const res = await get(req);
    if (res.status !== 200) return res;
    const body = new Uint8Array(await res.arrayBuffer());
    const headers = new Headers(res.headers);
    headers.set('etag', etagOf(body));
    return new Response(body, { status: 200, headers });
  };
}

/** One write at a time per blob: the check and the write can no longer interleave with another writer's. */
function serializeWrites(server: BlobsServer): void {
  const target = server as unknown as { put: Handler };
  const put = target.put.bind(server);
  const queues = new Map<string, Promise<unknown>>();
  target.put = (req) => {
    const blob = new URL(req.url ?? '', 'http://localhost').pathname;
    const run = (queues.get(blob) ?? Promise.resolve()).then(() => put(req));
    const settled = run.catch(() => {});
    queues.set(blob, settled);
    void settled.then(() => queues.get(blob) === settled && queues.delete(blob));
    return run;
  };
}

/** What a Blobs client needs to reach the local server (the fields of BlobsKeyStoreOptions). */
export interface LocalBlobsAccess {
  siteID: string;
  token: string;
  edgeURL: string;
  uncachedEdgeURL: string;
}

/** Node's request as the fetch Request the Blobs server's handler takes. */
function fetchRequest(req: http.IncomingMessage, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  const body =
    req.method === 'GET' || req.method === 'HEAD' ? undefined : (Readable.toWeb(req) as ReadableStream<Uint8Array>);
  return new Request(new URL(req.url ?? '/', origin), {
    method: req.method,
    headers,
    body,
    duplex: 'half',
  } as RequestInit);
}

/** Serves `blobs` on 127.0.0.1 (a free port): the address it listens on, and how to stop it. */
async function listenOnLoopback(blobs: BlobsServer): Promise<{ url: string; stop(): Promise<void> }> {
  const handle = (blobs as unknown as { handleRequest: Handler }).handleRequest.bind(blobs);
  let url = '';
  const server = http.createServer(async (req, res) => {
    try {
      const answer = await handle(fetchRequest(req, url));
      res.writeHead(answer.status, Object.fromEntries(answer.headers));
      if (answer.body && req.method !== 'HEAD') Readable.fromWeb(answer.body as never).pipe(res);
      else res.end();
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String((error as Error)?.message ?? error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The Blobs server builds signed URLs from its own address.
  (blobs as unknown as { address: string }).address = url;
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url, stop };
}

/** Starts the strict local Blobs server on 127.0.0.1 over `directory` (kept: it holds the site's blobs). */
export async function startLocalBlobs(directory: string, token = randomBytes(16).toString('hex')) {
  // The server makes its files as the umask says (0644): a folder of our own, 0700, keeps the keys' addresses private.
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await chmod(directory, 0o700);
  const server = new BlobsServer({ directory, token });
  serializeWrites(server);
  tagReads(server);
  await mkdir(directory, { recursive: true });
  const { url, stop } = await listenOnLoopback(server);
  const access: LocalBlobsAccess = { siteID: 'local-site', token, edgeURL: url, uncachedEdgeURL: url };
  return {
    access,
    /** NETLIFY_BLOBS_CONTEXT for a function or the edge function, which read their access from the environment. */
    context: Buffer.from(JSON.stringify(access)).toString('base64'),
    stop,
  };
}
