/**
 * Reading a request, once: which route its path names, the key segment, and
 * (after the gate) the decoded, checked parameters. Paths are split on `/`
 * before anything is decoded, so `%2F` stays inside a name.
 */
import {
  DATASET_FILE_NAME,
  ID_FORMS,
  type IdForm,
  MAX_NAME_LENGTH,
  MAX_SEARCH_LENGTH,
  type Param,
  type Route,
  type Lookup,
  type RouteId,
  ROUTES,
} from '../shared/routes.ts';
import { MESSAGES } from '../shared/messages.ts';
import { rankingAsk } from '../client/client.ts';

/** What the pipeline needs of a request. */
export interface ApiRequest {
  method: string;
  /** Path and query as sent, or a full URL. */
  url: string;
  /** A request header by lower-case name. */
  header(name: string): string | null | undefined;
  /** The client's address (the portal's per-client limit); 'unknown' when the runtime does not say. */
  clientIp?: string;
  /** The body's bytes, read only for the portal; null once more than `maxBytes` arrived. */
  body?(maxBytes: number): Promise<Uint8Array | null>;
}

/** A request naming one of the six lookups; its parameters still as sent. */
export interface RouteMatch {
  route: Route;
  /** The `apikey=` segment as sent, or null when there is none. */
  key: string | null;
  /**
   * That segment decoded, once, for every stage that reads the key (the gate, the
   * shared cache's tag, the log); null when there is none or its encoding is broken.
   */
  apiKey: string | null;
  /**
   * The path, and where the key's text starts in it (its length when
   * there is no key): the access log writes the key's id there instead.
   */
  pathname: string;
  keyAt: number;
  /** The `name=`, `year=`, `id=` and `file=` values as sent; undefined where the route has none. */
  raw: Record<Param, string | undefined>;
  /** The headers a lookup's reply reads, read once by parseRequest (null when absent). */
  ifNoneMatch: string | null;
  range: string | null;
  ifRange: string | null;
  /** A route with options (a ranking's): each segment after its parameters, as sent. */
  rest?: string[];
}

export type Parsed =
  /** An OPTIONS request, with the headers it asks to send. */
  | { kind: 'preflight'; requestHeaders: string | null }
  | { kind: 'method' }
  /** `/health`: whether the archive can be read, without a key. */
  | { kind: 'health' }
  /** The key portal's endpoints (anything under `/portal/`), whatever the method. */
  | { kind: 'portal'; pathname: string }
  /** `/`: the reference page for browsers, the service description for JSON clients. */
  | { kind: 'root' }
  /** Any other path: a public file of the build, or 404; null when the URL is unreadable. */
  | { kind: 'other'; pathname: string | null }
  | ({ kind: 'lookup' } & RouteMatch);

/**
 * The path of a request URL when it is already in the form WHATWG parsing
 * would give (an origin-form path of plain characters, no dot segments);
 * null when it needs the full parser.
 */
export function plainPathname(url: string): string | null {
  if (url.charCodeAt(0) !== 0x2f || url.charCodeAt(1) === 0x2f) return null; // '//x' would be a host
  const query = url.indexOf('?');
  const fragment = url.indexOf('#');
  const end = Math.min(query < 0 ? url.length : query, fragment < 0 ? url.length : fragment);
  const path = end === url.length ? url : url.slice(0, end);
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

/** The routes by their first segment (`archive`, `oscars`, `person`, ...). */
const BY_ROOT = new Map<string, Route[]>();
for (const route of ROUTES) for (const root of route.roots) BY_ROOT.set(root, [...(BY_ROOT.get(root) ?? []), route]);

type Matched = { kind: 'lookup' } & RouteMatch;

/** The health check's path: no key, no archive data, for load balancers and uptime monitors. */
export const HEALTH_PATH = '/health';

const APIKEY = 'apikey=';

/**
 * Splits the raw path on `/` first, then matches segments; nothing is decoded
 * yet. Segment `i` is `pathname.slice(cuts[i] + 1, cuts[i + 1])`, as
 * `split('/')` would give it, but only the values a route reads become
 * strings (it runs on every request).
 */
export function matchRoute(pathname: string): Matched | 'root' | null {
  if (pathname === '/' || pathname === '') return 'root';
  const cuts = [-1];
  for (let at = pathname.indexOf('/'); at >= 0; at = pathname.indexOf('/', at + 1)) cuts.push(at);
  cuts.push(pathname.length);
  let end = cuts.length - 1; // segments in use: 0 .. end - 1
  if (end > 2 && cuts[end] - cuts[end - 1] === 1) end--; // one trailing slash is fine
  let key: string | null = null;
  let keyAt = pathname.length;
  if (end > 1 && pathname.startsWith(APIKEY, cuts[end - 1] + 1)) {
    end--;
    keyAt = cuts[end] + 1 + APIKEY.length;
    key = pathname.slice(keyAt, cuts[end + 1]);
  }
  const routes = cuts.length > 2 ? BY_ROOT.get(pathname.slice(cuts[1] + 1, cuts[2])) : undefined;
  for (const route of routes ?? []) {
    const raw =
      route.params.length === end - 2 || (route.options && route.params.length < end - 2)
        ? paramsOf(route, pathname, cuts)
        : null;
    const rest = route.options && raw ? restOf(route, pathname, cuts, end) : undefined;
    if (raw)
      return {
        kind: 'lookup',
        route,
        key,
        apiKey: key === null ? null : decode(key),
        raw,
        pathname,
        keyAt,
        ifNoneMatch: null,
        range: null,
        ifRange: null,
        ...(rest && { rest }),
      };
  }
  return null;
}

/** Segments 2 .. as a route names them (`name=…`, `year=…`), or null when they differ. */
function paramsOf(route: Route, pathname: string, cuts: number[]): RouteMatch['raw'] | null {
  const raw: RouteMatch['raw'] = { name: undefined, year: undefined, id: undefined, file: undefined };
  for (let i = 0; i < route.params.length; i++) {
    const p = route.params[i];
    const start = cuts[2 + i] + 1;
    if (!pathname.startsWith(p, start) || pathname.charCodeAt(start + p.length) !== 0x3d) return null;
    raw[p] = pathname.slice(start + p.length + 1, cuts[3 + i]);
  }
  return raw;
}

/** The segments after a route's parameters up to the key's, as sent (at most one more than it has options: lookupOf refuses any past them). */
function restOf(route: Route, pathname: string, cuts: number[], end: number): string[] {
  const rest: string[] = [];
  for (let i = 2 + route.params.length; i < end && rest.length <= route.options!.length; i++)
    rest.push(pathname.slice(cuts[i] + 1, cuts[i + 1]));
  return rest;
}

const METHOD: Parsed = { kind: 'method' };
const HEALTH: Parsed = { kind: 'health' };
const ROOT: Parsed = { kind: 'root' };

/** The portal's endpoints: anything under /portal/ (the page itself is /portal and /portal/, public files). */
export function isPortalPath(pathname: string): boolean {
  return pathname.charCodeAt(1) === 0x70 && pathname.startsWith('/portal/') && pathname !== '/portal/';
}

/** What a request asks for, read once: everything the front door decides on, decoded nothing. */
export function parseRequest(request: ApiRequest): Parsed {
  const pathname = pathnameOf(request.url);
  if (pathname !== null && isPortalPath(pathname)) return { kind: 'portal', pathname };
  const method = request.method === 'GET' || request.method === 'HEAD' ? request.method : request.method.toUpperCase();
  if (method === 'OPTIONS')
    return { kind: 'preflight', requestHeaders: request.header('access-control-request-headers') ?? null };
  if (method !== 'GET' && method !== 'HEAD') return METHOD;
  if (pathname === HEALTH_PATH) return HEALTH;
  const m = pathname === null ? null : matchRoute(pathname);
  if (m === null || m === 'root') return m === null ? { kind: 'other', pathname } : ROOT;
  m.ifNoneMatch = request.header('if-none-match') ?? null;
  if (m.route.id === 'datasetFile')
    [m.range, m.ifRange] = [request.header('range') ?? null, request.header('if-range') ?? null];
  return m;
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

/** A year of 1 to 10 digits without its leading zeros (`0000` is `0`), or null when it is not one. */
function heldYear(text: string): string | null {
  if (text.length === 0 || text.length > 10) return null;
  let zeros = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return null;
    if (c === 0x30 && zeros === i) zeros++;
  }
  return zeros === 0 ? text : zeros === text.length ? '0' : text.slice(zeros);
}

/** The id form each id route accepts, and the 400 that names it. */
const ID_ROUTES: Partial<Record<RouteId, { form: IdForm; error: string }>> = {
  titleById: { form: ID_FORMS.titleById, error: MESSAGES.badTitleId },
  nameById: { form: ID_FORMS.nameById, error: MESSAGES.badNameId },
  filmRecord: { form: ID_FORMS.titleById, error: MESSAGES.badTitleId },
  peopleRecord: { form: ID_FORMS.nameById, error: MESSAGES.badNameId },
  awardRecord: { form: ID_FORMS.awardRecord, error: MESSAGES.badAwardId },
};

/** The decoded, checked parameters, or the 400 message saying what was wrong. */
export function lookupOf(m: RouteMatch): Lookup | { error: string } {
  if (m.rest) return rankingOf(m);
  const name = m.raw.name === undefined ? undefined : decode(m.raw.name);
  const year = m.raw.year === undefined ? undefined : decode(m.raw.year);
  const id = m.raw.id === undefined ? undefined : decode(m.raw.id);
  const file = m.raw.file === undefined ? undefined : decode(m.raw.file);
  if (name === null || year === null || id === null || file === null) return { error: MESSAGES.badEncoding };
  if (file !== undefined && !DATASET_FILE_NAME.test(file)) return { error: MESSAGES.badFileName };
  if (m.route.id === 'search') {
    if (name === undefined || name.length === 0 || !withinCodePoints(name, MAX_SEARCH_LENGTH))
      return { error: MESSAGES.badSearch };
  } else if (name !== undefined && (name.length === 0 || !withinCodePoints(name, MAX_NAME_LENGTH)))
    return { error: MESSAGES.badName };
  const held = year === undefined ? undefined : heldYear(year);
  if (held === null) return { error: MESSAGES.badYear };
  const idRoute = ID_ROUTES[m.route.id];
  if (idRoute && !idRoute.form.test(id ?? '')) return { error: idRoute.error };
  return { route: m.route.id, name, year: held, id, file };
}

/** A ranking's segments decoded and checked (rankingAsk), or the 400 that names the one that is wrong. */
function rankingOf(m: RouteMatch): Lookup | { error: string } {
  const pairs: [string, string][] = [];
  for (const segment of m.rest!) {
    const at = segment.indexOf('=');
    const value = decode(segment.slice(at + 1));
    if (value === null) return { error: MESSAGES.badEncoding };
    pairs.push([at < 0 ? segment : segment.slice(0, at), at < 0 ? '' : value]);
  }
  const ranking = rankingAsk(pairs);
  return 'error' in ranking ? ranking : { route: m.route.id, ranking };
}
