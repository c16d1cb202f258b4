/**
 * The local stand-ins side by side: two `npm run dev:cloudflare` started at
 * once, and two `npm run dev:netlify`, each on a PORT of its own (picked
 * free), each answering. Every port either opens is picked free, wrangler's
 * devtools port included (it was 9229 for both, and the second died with
 * "Address already in use").
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SAMPLE_SOURCE } from '../helpers/paths.ts';
import { startNetlifyLocal, startWorker } from '../helpers/processes.ts';
import { buildInto, tempDir } from '../helpers/temp.ts';

/** What each base answers at /health and /portal. */
async function answers(bases: string[]): Promise<[string, number, number][]> {
  return Promise.all(
    bases.map(async (base): Promise<[string, number, number]> => [
      base,
      (await fetch(`${base}/health`)).status,
      (await fetch(`${base}/portal`)).status,
    ]),
  );
}

describe('two of each local stand-in at once', () => {
  it('runs two npm run dev:cloudflare at once, each answering on its own port', { timeout: 400_000 }, async () => {
    const dists = await Promise.all([
      buildInto(SAMPLE_SOURCE, 'twin-worker-a'),
      buildInto(SAMPLE_SOURCE, 'twin-worker-b'),
    ]);
    const started = await Promise.allSettled(dists.map((dist) => startWorker(dist)));
    try {
      const workers = started.map((s) => {
        if (s.status === 'rejected') throw s.reason;
        return s.value;
      });
      expect(workers[0].port).not.toBe(workers[1].port);
      const bases = workers.map((w) => `http://127.0.0.1:${w.port}`);
      expect(await answers(bases)).toEqual(bases.map((base) => [base, 200, 200]));
    } finally {
      for (const s of started) if (s.status === 'fulfilled') await s.value.stop();
    }
  });

  it('runs two npm run dev:netlify at once, each answering on its own port', { timeout: 300_000 }, async () => {
    const dirs = await Promise.all([tempDir('twin-netlify-a'), tempDir('twin-netlify-b')]);
    const dists = await Promise.all([
      buildInto(SAMPLE_SOURCE, 'twin-netlify-a'),
      buildInto(SAMPLE_SOURCE, 'twin-netlify-b'),
    ]);
    const started = await Promise.allSettled(
      dirs.map((dir, i) => startNetlifyLocal({ DIST_DIR: dists[i], NETLIFY_LOCAL_DIR: path.join(dir, 'state') })),
    );
    try {
      const servers = started.map((s) => {
        if (s.status === 'rejected') throw s.reason;
        return s.value;
      });
      expect(servers[0].port).not.toBe(servers[1].port);
      const bases = servers.map((s) => s.base);
      expect(await answers(bases)).toEqual(bases.map((base) => [base, 200, 200]));
    } finally {
      for (const s of started) if (s.status === 'fulfilled') await s.value.stop();
    }
  });
});
