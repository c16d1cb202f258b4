/**
 * Which public file of the build a path names, for every runtime: the
 * reference page, the portal page and its assets, openapi.json. Never a file
 * under `_data/` (the archive, read only through lookups), never a dotfile,
 * never outside the build; `/portal` is `portal.html`, as Netlify's pretty
 * URLs have it. The runtime's DataSource reads the bytes.
 */
import { CORS, type ApiReply } from './api/reply.ts';
import { DATA_PREFIX } from './refs.ts';

const TYPES: Record<string, string> = {
  json: 'application/json; charset=utf-8',
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  txt: 'text/plain; charset=utf-8',
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

/** The build's file a path names (relative to the build's folder) and its type, or null. */
export function publicFile(pathname: string): PublicFile | null {
  if (pathname.length > MAX_PUBLIC_PATH) return null;
  let relative: string;
  try {
    relative = decodeURIComponent(pathname).slice(1);
  } catch {
    return null;
  }
  if (relative === '' || relative.endsWith('/')) relative += INDEX_PAGE;
  const segments = relative.split('/');
  if (segments[0] === DATA_PREFIX || segments.some((s) => s.startsWith('.') || s === '') || relative.includes('\\') || relative.includes('\0')) return null;
  const last = segments[segments.length - 1];
  if (!last.includes('.')) relative += '.html';
  const type = TYPES[relative.slice(relative.lastIndexOf('.') + 1)];
  return type ? { path: relative, type } : null;
}

/** A public file's reply: shared caches may keep it a few minutes; other origins may read it. */
export function fileReply(bytes: Uint8Array, type: string): ApiReply {
  return {
    status: 200,
    headers: { ...CORS, 'content-type': type, 'cache-control': 'public, max-age=300', 'content-length': String(bytes.length) },
    body: bytes,
  };
}
