/**
 * A real Node server over a dist/ built from the sample into a temporary
 * folder, with one issued key: for the reference page, contract and client
 * tests. Never touches the project's dist/.
 */
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { build } from '../build/build.ts';
import { Keys } from '../src/keys.ts';
import { createNodeServer } from '../src/server/server.node.ts';
import { SqliteKeyBackend } from '../src/server/sqlite-keys.node.ts';
import { tempDir } from './helpers.ts';

export const SAMPLE = 'data/sample/oscars-sample.tsv';

export interface LocalServer {
  baseUrl: string;
  key: string;
  dist: string;
  close(): Promise<void>;
}

export async function startLocalServer(options: { rateLimitPerMinute?: number } = {}): Promise<LocalServer> {
  const dir = await tempDir('local');
  const dist = path.join(dir, 'dist');
  await build({ source: SAMPLE, out: dist, summary: path.join(dir, 'summary.json'), log: () => {} });
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
