/**
 * The build's files where a runtime reaches them with `fetch` (the Netlify
 * edge function through `context.next()`, a Cloudflare Worker through its
 * static-assets binding), kept in the isolate's memory, bounded by bytes.
 * A file the CDN says is longer than MAX_FILE_BYTES is refused unread (a
 * DataError: 500), as is one found longer once read.
 * Within one deploy a file never changes, except that the manifest is read
 * again after `MANIFEST_TTL_MS`, so a long-lived isolate follows a new deploy
 * of the data. A file the CDN does not have is null and is not kept. A path
 * that is not a build path (isBuildPath) is null at once and never fetched,
 * so the URL a runtime makes of it names exactly the file that was checked.
 * Only what is already read (bytes) is shared between requests,
 * never a fetch or a stream in flight: workerd ties those to the request
 * that made them, so a file missing from the cache is fetched by each
 * request that wants it.
 * Files the runtime carries in its own code (`bundled`: a Worker's bundle,
 * checked against their names when put there, adapters/_cloudflare/worker-bundle.node.ts) are
 * handed to the archive as text (`DataSource.checkedText`), never fetched:
 * code and files deploy as one version there, so a bundled manifest never
 * goes stale.
 */
import type { DataSource, StoredStream } from '../src/store/answer.ts';
import { ByteLru } from '../src/shared/lru.ts';
import { isBuildPath, MANIFEST_PATH } from '../src/store/refs.ts';
import { DataError } from '../src/store/archive.ts';

const MANIFEST_TTL_MS = 60_000;
const MAX_CACHED_BYTES = 64 * 1024 * 1024;
/**
 * A build file is at most this long (the full archive's largest, the
 * dataset's SQLite file, is 6.3 MiB): one said to be longer is not read.
 */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Fetches one file of the build by its path relative to the build's
 * folder (`_data/manifest.json`, `index.html`), always a build path.
 */
export type FetchFile = (path: string) => Promise<Response>;

/** A file kept: its bytes, counted at their length. */
interface Kept {
  size: number;
  until: number;
  bytes: Uint8Array;
}

export class FetchedFiles {
  private readonly cache = new ByteLru<Kept>(MAX_CACHED_BYTES);
  private readonly now: () => number;
  /** The bundled files' texts by path. */
  private readonly bundled: ReadonlyMap<string, string>;

  constructor({ bundled = {}, now = Date.now }: { bundled?: Record<string, string>; now?: () => number } = {}) {
    [this.bundled, this.now] = [new Map(Object.entries(bundled)), now];
  }

  /**
   * A DataSource over this cache that fetches what it lacks with `fetchFile`
   * (per request, where the runtime's fetch is). With `streams`, only for a
   * platform that keeps each file as the deploy uploaded it, an answer's own
   * file is passed on as it arrives (`DataSource.stream`); a stream is not
   * kept.
   */
  through(fetchFile: FetchFile, { streams = false } = {}): DataSource {
    const read: DataSource['read'] = (path) => {
      if (!isBuildPath(path)) return null;
      const hit = this.cache.peek(path);
      if (hit && hit.until > this.now()) return hit.bytes;
      return this.fetch(path, fetchFile);
    };
    const checkedText = this.checkedText;
    if (!streams) return { read, checkedText };
    return { read, checkedText, stream: (path) => streamOf(path, fetchFile) };
  }

  /** A DataSource of the bundled files alone: nothing is fetched (what a Worker reads as its isolate starts). */
  carried(): DataSource {
    return { read: () => null, checkedText: this.checkedText };
  }

  /** A file the Worker carries in its code, as text (checked when the bundle was made); undefined for any other. */
  private readonly checkedText = (path: string): string | undefined => this.bundled.get(path);

  private async fetch(path: string, fetchFile: FetchFile): Promise<Uint8Array | null> {
    const response = await found(path, fetchFile);
    if (!response) {
      this.cache.delete(path);
      return null;
    }
    const bytes = new Uint8Array(await whole(path, response));
    this.cache.set(path, {
      size: bytes.length,
      bytes,
      until: path === MANIFEST_PATH ? this.now() + MANIFEST_TTL_MS : Infinity,
    });
    return bytes;
  }
}

/** The CDN's response for a build path, or null (nothing fetched for any other path; the body of a miss cancelled). */
async function found(path: string, fetchFile: FetchFile): Promise<Response | null> {
  if (!isBuildPath(path)) return null;
  const response = await fetchFile(path);
  if (response.ok) return response;
  await response.body?.cancel();
  return null;
}

/**
 * `response`'s body read whole by the runtime, refused unread when it is
 * said to be past MAX_FILE_BYTES and once read when it is: read chunk by
 * chunk here instead, 1.5 MB cost a cold Worker about 10 ms more.
 */
async function whole(path: string, response: Response): Promise<ArrayBuffer> {
  const said = Number(response.headers.get('content-length') ?? 0);
  if (said > MAX_FILE_BYTES) {
    await response.body?.cancel();
    throw new DataError(`${path} is said to be ${said} bytes, past ${MAX_FILE_BYTES}`);
  }
  const body = await response.arrayBuffer();
  if (body.byteLength > MAX_FILE_BYTES)
    throw new DataError(`${path} is ${body.byteLength} bytes, past ${MAX_FILE_BYTES}`);
  return body;
}

async function streamOf(path: string, fetchFile: FetchFile): Promise<StoredStream | null> {
  const response = await found(path, fetchFile);
  if (!response?.body) return null;
  const length = response.headers.get('content-length');
  return { body: response.body, length: length === null ? null : Number(length) };
}
