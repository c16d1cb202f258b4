/**
 * Which public file of the build a path names, for every runtime: the
 * reference page, the portal page and its assets, openapi.json. The answer is
 * always one of the names in PUBLIC_FILES, never text the request built, so
 * no data source can read a file under `_data/` (the archive, read only
 * through lookups), a dotfile or anything outside the build, however the path
 * was encoded. `/portal` is `portal.html`, as Netlify's pretty URLs have it.
 * The runtime's DataSource reads the bytes.
 */
import { CORS, type ApiReply } from '../http/reply.ts';

/** Every file the build publishes outside its data folder; build/site/public.ts writes exactly these. */
export const PUBLIC_FILES = [
  'index.html',
  'openapi.json',
  'portal.html',
  'portal.css',
  'portal.js',
  'favicon.svg',
  'portal/index.html',
] as const;
const PUBLIC = new Set<string>(PUBLIC_FILES);

const TYPES: Record<string, string> = {
  json: 'application/json; charset=utf-8',
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
};

/**
 * Longest path a public file can have: the build's own are far shorter. A
 * longer one is a 404 at once, never a question to the disk or the CDN (a
 * flood of hostile 15 KB paths once grew the Node server's heap by hundreds of MiB).
 */
export const MAX_PUBLIC_PATH = 1024;

/** The page browsers get at `/` (and at any folder's path). */
const INDEX_PAGE = 'index.html';

/** A public file of the build: its path relative to the build's folder and its content type. */
export interface PublicFile {
  path: string;
  type: string;
}

/** Whether a request's Accept header asks for a page. */
export const wantsHtml = (accept: string | null | undefined) => (accept ?? '').includes('text/html');

/** The build's file a path names (one of PUBLIC_FILES) and its type, or null. */
export function publicFile(pathname: string): PublicFile | null {
  if (pathname.length > MAX_PUBLIC_PATH) return null;
  let relative: string;
  try {
    relative = decodeURIComponent(pathname).slice(1);
  } catch {
    return null;
  }
  if (relative === '' || relative.endsWith('/')) relative += INDEX_PAGE;
  else if (!relative.slice(relative.lastIndexOf('/') + 1).includes('.')) relative += '.html';
  if (!PUBLIC.has(relative)) return null;
  return { path: relative, type: TYPES[relative.slice(relative.lastIndexOf('.') + 1)] };
}

/** A public file's reply: shared caches may keep it a few minutes; other origins may read it. */
export function fileReply(bytes: Uint8Array, type: string): ApiReply {
  return {
    status: 200,
    headers: {
      ...CORS,
      'content-type': type,
      'cache-control': 'public, max-age=300',
      'content-length': String(bytes.length),
    },
    body: bytes,
  };
}
