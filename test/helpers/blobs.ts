/**
 * The local Blobs server `npm run dev:netlify` uses (cli/lib/local-blobs.ts: as
 * strict as Netlify's service about conditional writes), in a temp folder
 * removed when it stops, so the race tests test our logic, not the
 * stand-in's gaps.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startLocalBlobs } from '../../cli/lib/local-blobs.ts';
import type { BlobsKeyStoreOptions } from '../../adapters/_netlify/blobs-keys.ts';

export async function startBlobs(tag = 'blobs') {
  const dir = await mkdtemp(path.join(os.tmpdir(), `faa-${tag}-`));
  const blobs = await startLocalBlobs(dir, 'test-token');
  const access = { ...blobs.access, siteID: 'test-site' } satisfies BlobsKeyStoreOptions;
  return {
    access,
    /** NETLIFY_BLOBS_CONTEXT for a function or the edge function, which read their access from the environment. */
    context: Buffer.from(JSON.stringify(access)).toString('base64'),
    dir,
    async stop() {
      await blobs.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type Blobs = Awaited<ReturnType<typeof startBlobs>>;
