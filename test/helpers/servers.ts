/**
 * Servers in the test process: a sample build in a sandbox, the Node server on loopback (bare, or
 * over the sample with one key), and the portal behind the front door as a fetch runtime serves it.
 */
import { rm } from 'node:fs/promises';
import { type AddressInfo } from 'node:net';
import path from 'node:path';
import { Keys } from '../../src/keys/rules.ts';
import { createNodeServer, type ServerOptions } from '../../adapters/node.ts';
import { createApi } from '../../src/api/handler.ts';
import type { PortalOptions } from '../../src/portal/portal.ts';
import { SqliteKeyBackend } from '../../src/keys/stores/sqlite.node.ts';
import { SAMPLE_SOURCE } from './paths.ts';
import { buildInto } from './temp.ts';

export interface Sandbox {
  dir: string;
  dist: string;
  /** The SQLite key database the server opens. */
  keysDb: string;
  remove(): Promise<void>;
}

/** Builds the sample into a fresh temp folder (never the project's dist/). */
export async function sampleSandbox(tag: string): Promise<Sandbox> {
  const dist = await buildInto(SAMPLE_SOURCE, tag);
  const dir = path.dirname(dist);
  return { dir, dist, keysDb: path.join(dir, 'keys.db'), remove: () => rm(dir, { recursive: true, force: true }) };
}

export interface Running {
  port: number;
  server: ReturnType<typeof createNodeServer>;
  close(): Promise<void>;
}

/** createNodeServer listening on 127.0.0.1, an ephemeral port. */
export async function listen(options: ServerOptions): Promise<Running> {
  const server = createNodeServer(options);
  await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.server.closeAllConnections();
        server.server.close(() => resolve());
      }),
  };
}

/**
 * A real Node server over a dist/ built from the sample into a temporary
 * folder, with one issued key: for the reference page, contract and client
 * tests. Never touches the project's dist/.
 */
export interface LocalServer {
  baseUrl: string;
  key: string;
  dist: string;
  close(): Promise<void>;
}

export async function startLocalServer(options: { rateLimitPerMinute?: number } = {}): Promise<LocalServer> {
  const dist = await buildInto(SAMPLE_SOURCE, 'local');
  const dir = path.dirname(dist);
  const backend = new SqliteKeyBackend(path.join(dir, 'keys.db'));
  const keys = new Keys(backend);
  const key = await keys.issue('contract@example.org');
  const { server } = createNodeServer({ dist, keys, rateLimitPerMinute: options.rateLimitPerMinute });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    key,
    dist,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      backend.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The key portal behind the front door, as a fetch runtime serves it: Request and client address in, Response out. */
export function portalFront(options: PortalOptions) {
  const api = createApi({ keys: options.keys, portal: options, log: options.log, now: options.now });
  return {
    handle: (request: Request, clientIp: string) => api.handle(request, undefined, clientIp),
    limiter: api.portalLimiter!,
  };
}
