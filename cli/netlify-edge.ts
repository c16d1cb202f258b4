/**
 * Runs the real edge function file under Deno, behind a stand-in for
 * Netlify's CDN: requests that netlify.toml routes to the function (read by
 * edge-routes.ts) go to it with a Context whose `next()` serves the publish
 * folder the way the CDN would; everything else is served statically. Started
 * by `npm run dev:netlify` (cli/netlify-local.ts, which puts the portal
 * function in front of it), by the tests and by the benchmark:
 *   deno run -A cli/netlify-edge.ts <dist> <port>
 * It prints `listening on <port>` once it answers.
 */
import { edgeRouter } from './edge-routes.ts';

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
(globalThis as any).Netlify = { env: { get: (name: string) => Deno.env.get(name) } };
const { default: handler } = await import('../netlify/edge-functions/api.ts');

/** The CDN's static answer for a path: the file, or 404. */
async function serveStatic(request: Request): Promise<Response> {
  let pathname = decodeURIComponent(new URL(request.url).pathname);
  if (pathname.endsWith('/')) pathname += 'index.html';
  if (pathname.split('/').includes('..')) return new Response('Not Found', { status: 404 });
  for (const candidate of [pathname, `${pathname}.html`]) {
    try {
      const bytes = await Deno.readFile(`${dist}${candidate}`);
      const ext = candidate.split('.').pop() ?? '';
      return new Response(request.method === 'HEAD' ? null : bytes, { headers: { 'content-type': TYPES[ext] ?? 'application/octet-stream' } });
    } catch {
      // try the next candidate
    }
  }
  return new Response('Not Found', { status: 404 });
}

const handles = edgeRouter(await Deno.readTextFile(new URL('../netlify.toml', import.meta.url)), 'api');

Deno.serve(
  {
    hostname: '127.0.0.1',
    port: Number(portText ?? 0),
    onListen: ({ port }: { port: number }) => console.log(`listening on ${port}`),
  },
  async (request: Request) => {
    if (!handles(new URL(request.url).pathname)) return serveStatic(request);
    const context = {
      ip: '127.0.0.1',
      next: (next?: Request) => serveStatic(next ?? request),
    };
    return (await handler(request, context as any)) ?? serveStatic(request);
  },
);
