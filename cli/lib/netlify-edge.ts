/**
 * Runs the real edge function file under Deno, behind a stand-in for
 * Netlify's CDN: requests that netlify.toml routes to the function (read by
 * edge-routes.ts) go to it with a Context whose `next()` serves the publish
 * folder the way the CDN would; everything else is served statically. Started
 * by `npm run dev:netlify` (cli/netlify-local.ts, which puts the portal
 * function in front of it), by the tests and by the benchmark:
 *   deno run -A cli/lib/netlify-edge.ts <dist> <port>
 * It prints `listening on <port>` once it answers. A path that does not
 * parse (as a URL, or its percent-encoding) is answered 400 as JSON. With
 * EDGE_EXIT_WITH_STDIN=1 it exits once its stdin closes: dev:netlify gives it
 * a pipe, so it never outlives its parent.
 */
import { edgeRouter } from './edge-routes.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Deno's own types are not installed
declare const Deno: any;

const [dist, portText] = Deno.args;
const TYPES: Record<string, string> = {
  json: 'application/json',
  html: 'text/html; charset=utf-8',
  css: 'text/css',
  js: 'text/javascript',
  svg: 'image/svg+xml',
};

// Netlify's global, before the function's module runs: it reads its settings when it loads.
Object.assign(globalThis, { Netlify: { env: { get: (name: string) => Deno.env.get(name) } } });
const { default: handler } = await import('../../netlify/edge-functions/api.ts');

const BAD_PATH = JSON.stringify({ error: 'Invalid path: it does not parse as a URL path' });
const badPath = () => new Response(BAD_PATH, { status: 400, headers: { 'content-type': 'application/json' } });

/** The CDN's static answer for a path: the file, 404, or 400 for a path that does not decode. */
async function serveStatic(request: Request): Promise<Response> {
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(request.url).pathname);
  } catch {
    return badPath(); // malformed percent-encoding: no file has such a name
  }
  if (pathname.endsWith('/')) pathname += 'index.html';
  if (pathname.split('/').includes('..')) return new Response('Not Found', { status: 404 });
  for (const candidate of [pathname, `${pathname}.html`]) {
    try {
      const bytes = await Deno.readFile(`${dist}${candidate}`);
      const ext = candidate.split('.').pop() ?? '';
      return new Response(request.method === 'HEAD' ? null : bytes, {
        headers: { 'content-type': TYPES[ext] ?? 'application/octet-stream' },
      });
    } catch {
      // try the next candidate
    }
  }
  return new Response('Not Found', { status: 404 });
}

if (Deno.env.get('EDGE_EXIT_WITH_STDIN') === '1') {
  (async () => {
    try {
      for await (const _ of Deno.stdin.readable) {
        // nothing is ever sent: only the end matters
      }
    } finally {
      Deno.exit(0);
    }
  })();
}

const handles = edgeRouter(await Deno.readTextFile(new URL('../../netlify.toml', import.meta.url)), 'api');

Deno.serve(
  {
    hostname: '127.0.0.1',
    port: Number(portText ?? 0),
    onListen: ({ port }: { port: number }) => console.log(`listening on ${port}`),
  },
  async (request: Request) => {
    let pathname: string;
    try {
      pathname = new URL(request.url).pathname;
    } catch {
      return badPath();
    }
    if (!handles(pathname)) return serveStatic(request);
    const context = {
      ip: '127.0.0.1',
      next: (next?: Request) => serveStatic(next ?? request),
    };
    return (await handler(request, context as Parameters<typeof handler>[1])) ?? serveStatic(request);
  },
);
