/**
 * Reading a request, once: which route its path names, the key segment, and
 * (after the gate) the decoded, checked parameters. Paths are split on `/`
 * before anything is decoded, so `%2F` stays inside a name.
 */
import { MAX_NAME_LENGTH, type Param, type Route, type RouteId, ROUTES } from '../routes.ts';
import { MESSAGES } from '../messages.ts';

/** What the pipeline needs of a request. */
export interface ApiRequest {
  method: string;
  /** Path and query as sent, or a full URL. */
  url: string;
  /** A request header by lower-case name. */
  header(name: string): string | null | undefined;
}

/** A request naming one of the six lookups; its parameters still as sent. */
export interface RouteMatch {
  route: Route;
  /** The `apikey=` segment as sent, or null when there is none. */
  key: string | null;
  raw: Partial<Record<Param, string>>;
}

/** A lookup with its parameters decoded and checked. */
export interface Lookup {
  route: RouteId;
  name?: string;
  /** The held year, without leading zeros. */
  year?: string;
}

export type Parsed =
  | { kind: 'preflight' }
  | { kind: 'method' }
  /** Not one of the lookups: `/` (root) or any other path (public files, 404). */
  | { kind: 'other'; root: boolean }
  | ({ kind: 'lookup' } & RouteMatch);

/**
 * The path of a request URL when it is already in the form WHATWG parsing
 * would give (an origin-form path of plain characters, no dot segments);
 * null when it needs the full parser.
 */
export function plainPathname(url: string): string | null {
  if (url.charCodeAt(0) !== 0x2f || url.charCodeAt(1) === 0x2f) return null; // '//x' would be a host
  let end = url.length;
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x3f || c === 0x23) {
      end = i;
      break;
    }
  }
  const path = url.slice(0, end);
  if (!/^[A-Za-z0-9\-._~%!$&'()*+,;=:@/]*$/.test(path) || /\/(?:\.|%2e)/i.test(path)) return null;
  return path;
}

/** The path as every runtime sees it (normalised the WHATWG way); null when the URL is unreadable. */
export function pathnameOf(url: string): string | null {
  const plain = plainPathname(url);
  if (plain !== null) return plain;
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return null;
  }
}

/** Splits the raw path on `/` first, then matches segments; nothing is decoded yet. (Plain loops: it runs on every request.) */
export function matchRoute(pathname: string): RouteMatch | 'root' | null {
  if (pathname === '/' || pathname === '') return 'root';
  const parts = pathname.split('/'); // parts[0] is what precedes the first '/'
  let end = parts.length;
  if (end > 2 && parts[end - 1] === '') end--; // one trailing slash is fine
  let key: string | null = null;
  if (end > 1 && parts[end - 1].startsWith('apikey=')) key = parts[--end].slice('apikey='.length);
  const count = end - 2;
  for (const route of ROUTES) {
    if (route.params.length !== count || !route.roots.includes(parts[1])) continue;
    const raw: Partial<Record<Param, string>> = {};
    let i = 0;
    for (; i < count; i++) {
      const p = route.params[i];
      const segment = parts[2 + i];
      if (!segment.startsWith(p) || segment.charCodeAt(p.length) !== 0x3d) break;
      raw[p] = segment.slice(p.length + 1);
    }
    if (i === count) return { route, key, raw };
  }
  return null;
}

/** Method and route: everything the gate needs, decoded nothing. */
export function parseRequest(request: ApiRequest): Parsed {
  const method = request.method === 'GET' || request.method === 'HEAD' ? request.method : request.method.toUpperCase();
  if (method === 'OPTIONS') return { kind: 'preflight' };
  if (method !== 'GET' && method !== 'HEAD') return { kind: 'method' };
  const pathname = pathnameOf(request.url);
  const m = pathname === null ? null : matchRoute(pathname);
  if (m === null || m === 'root') return { kind: 'other', root: m === 'root' };
  return { kind: 'lookup', route: m.route, key: m.key, raw: m.raw };
}

/** Code points in `text` (what MAX_NAME_LENGTH counts), counted only when its UTF-16 length could exceed `limit`. */
function withinCodePoints(text: string, limit: number): boolean {
  if (text.length <= limit) return true;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
    if (++count > limit) return false;
  }
  return true;
}

export function decode(value: string): string | null {
  if (!value.includes('%')) return value; // what decodeURIComponent would answer, without its cost
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/** The decoded, checked parameters, or the 400 message saying what was wrong. */
export function lookupOf(m: RouteMatch): Lookup | { error: string } {
  const name = m.raw.name === undefined ? undefined : decode(m.raw.name);
  const year = m.raw.year === undefined ? undefined : decode(m.raw.year);
  if (name === null || year === null) return { error: MESSAGES.badEncoding };
  if (name !== undefined && (name.length === 0 || !withinCodePoints(name, MAX_NAME_LENGTH))) return { error: MESSAGES.badName };
  if (year !== undefined && !/^[0-9]{1,10}$/.test(year)) return { error: MESSAGES.badYear };
  return { route: m.route.id, name, year: year === undefined ? undefined : String(Number(year)) };
}
