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
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { BlobsServer } from '@netlify/blobs/server';

const etagOf = (bytes: Uint8Array) => `"${createHash('sha256').update(bytes).digest('hex').slice(0, 32)}"`;
(BlobsServer as unknown as { generateETag(file: string): Promise<string> }).generateETag = async (file) => etagOf(await readFile(file));

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

/** Starts the strict local Blobs server on 127.0.0.1 over `directory` (kept: it holds the site's blobs). */
export async function startLocalBlobs(directory: string, token = randomBytes(16).toString('hex')) {
  // The server makes its files as the umask says (0644): a folder of our own, 0700, keeps the keys' addresses private.
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await chmod(directory, 0o700);
  const server = new BlobsServer({ directory, token });
  serializeWrites(server);
  tagReads(server);
  const { port } = await server.start();
  const url = `http://127.0.0.1:${port}`;
  const access: LocalBlobsAccess = { siteID: 'local-site', token, edgeURL: url, uncachedEdgeURL: url };
  return {
    access,
    /** NETLIFY_BLOBS_CONTEXT for a function or the edge function, which read their access from the environment. */
    context: Buffer.from(JSON.stringify(access)).toString('base64'),
    stop: () => server.stop(),
  };
}
