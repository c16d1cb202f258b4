/**
 * CPU time of the real edge function per request, under Deno, in a fresh
 * isolate (cold: the module just loaded, nothing cached) and then warm.
 * Netlify allows 50 ms of CPU per request; waiting is not counted, so the
 * CDN stand-in serves dist/ from memory, loaded before the clock starts.
 *
 *   deno run -A bench/edge-cpu.ts <dist> <warm runs> <path>
 *
 * Prints one JSON line: module load, the first request's CPU milliseconds
 * (cold) and the median and p99 of the warm runs after it. Keys come from the Blobs
 * store named by NETLIFY_BLOBS_CONTEXT, as in the tests.
 */
import process from 'node:process';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Deno's own types are not installed
declare const Deno: any;

const [dist, runsText, path] = Deno.args;
Object.assign(globalThis, { Netlify: { env: { get: (name: string) => Deno.env.get(name) } } });

async function load(dir: string, prefix = ''): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  for await (const entry of Deno.readDir(`${dir}/${prefix}`)) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory) for (const [k, v] of await load(dir, relative)) files.set(k, v);
    else files.set(`/${relative}`, await Deno.readFile(`${dir}/${relative}`));
  }
  return files;
}

const files = await load(dist);
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const context = {
  ip: '127.0.0.1',
  next: async (request?: Request) => {
    const bytes = request ? files.get(new URL(request.url).pathname) : undefined;
    return bytes ? new Response(bytes as Uint8Array<ArrayBuffer>) : new Response('Not Found', { status: 404 });
  },
};

const started = cpuMs();
const { default: handler } = await import('../netlify/edge-functions/api.ts');
const moduleLoad = cpuMs() - started;

/** CPU of one request, from the call to the Response (its body is the runtime's to stream). */
async function once(path: string): Promise<{ ms: number; status: number }> {
  const before = cpuMs();
  const response = await handler(new Request(`http://localhost${path}`), context as never);
  const ms = cpuMs() - before;
  await response.body?.cancel();
  return { ms, status: response.status };
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const cold = await once(path);
const warm: number[] = [];
for (let i = 0; i < Number(runsText); i++) warm.push((await once(path)).ms);
console.log(
  JSON.stringify({
    moduleLoad,
    status: cold.status,
    cold: cold.ms,
    warmMedian: quantile(warm, 0.5),
    warmP99: quantile(warm, 0.99),
  }),
);
