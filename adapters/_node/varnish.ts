/**
 * Varnish in front of the Node server (deploy/varnish/default.vcl): the
 * headers it reads and its purge hook (CACHE_PURGE_URL), for the server and
 * for `npm run keys`. The core decides what may be kept (src/http/cache.ts);
 * this says it the way Varnish reads it.
 */
import { type Purge, reasonOf, type SharedHeaders } from '../../src/http/cache.ts';

/**
 * What Varnish reads: the targeted cache-control header (RFC 9213) and the
 * tags its xkey vmod indexes, separated by spaces. What may never be shared
 * needs no header: default.vcl passes `/portal` and `/health` itself.
 */
export const varnishHeaders: SharedHeaders = (policy): Record<string, string> =>
  policy.keep ? { 'cdn-cache-control': `public, max-age=${policy.maxAge}`, xkey: policy.tags.join(' ') } : {};

/** Query parameters whose value is a secret by its name. */
const SECRET_PARAM = /token|key|secret|pass|auth|sig|session|credential|code/i;

/**
 * A purge URL as it may be printed: no user or password (`***` stands for
 * them), and the value of every query parameter named like a secret or
 * shaped like one (16 characters or more) as `***`.
 */
export function shownUrl(url: URL): string {
  const who = url.username || url.password ? '***@' : '';
  const query = [...url.searchParams].map(
    ([name, value]) => `${name}=${SECRET_PARAM.test(name) || value.length >= 16 ? '***' : encodeURIComponent(value)}`,
  );
  return `${url.protocol}//${who}${url.host}${url.pathname}${query.length ? `?${query.join('&')}` : ''}`;
}

/**
 * CACHE_PURGE_URL checked: an absolute http or https URL with a host, as
 * given; a RangeError in one line otherwise (naming no password).
 */
export function purgeUrlSetting(value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // said below
  }
  if (!url || !/^https?:$/.test(url.protocol) || !url.hostname) {
    const shown = url ? ` (${shownUrl(url)})` : '';
    throw new RangeError(
      `CACHE_PURGE_URL must be an http or https URL with a host, such as http://127.0.0.1:6081/; got an unusable value${shown}`,
    );
  }
  return value;
}

/**
 * The own server's purge hook (CACHE_PURGE_URL): `PURGE` with the tags in an
 * `xkey-purge` header, as deploy/varnish/default.vcl takes it (from
 * localhost only); any 2xx confirms. A user and password in the URL are sent
 * as Basic authentication (fetch refuses them in a URL) and never printed; a
 * redirect is not followed (it could send the credentials and the purge to
 * another host) and counts as a failure.
 */
export function purgeHook(url: string): Purge {
  const target = new URL(purgeUrlSetting(url));
  const shown = shownUrl(target);
  const headers: Record<string, string> = {};
  if (target.username || target.password) {
    const user = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
    headers.authorization = `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(user)))}`;
    target.username = target.password = '';
  }
  return async (tags, signal) => {
    let reply: Response;
    try {
      reply = await fetch(target, {
        method: 'PURGE',
        headers: { ...headers, 'xkey-purge': tags.join(' ') },
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      throw new Error(`${shown}: ${reasonOf(error)}`);
    }
    await reply.body?.cancel();
    if (reply.status >= 300 && reply.status < 400)
      throw new Error(`${shown} answered ${reply.status}, a redirect (not followed)`);
    if (!reply.ok) throw new Error(`${shown} answered ${reply.status}`);
  };
}
