/**
 * The build a command serves or deploys (npm start, dev:netlify,
 * dev:cloudflare, deploy:cloudflare), made current first: an interrupted
 * build recovered, a stale one rebuilt (build/prepare-dist.ts); a build that
 * is refused stops the command with its reason in one line.
 */
import { BuildRefused } from '../../build/refused.ts';
import { recoverOutput } from '../../build/output.ts';
import { prepareDist } from '../../build/prepare-dist.ts';
import type { Refuse } from '../../lib/command-line.ts';
import { DIST } from './paths.ts';

export async function currentDist(refuse: Refuse): Promise<void> {
  await recoverOutput(DIST);
  try {
    await prepareDist(DIST);
  } catch (error) {
    if (!(error instanceof BuildRefused)) throw error;
    refuse(error.message);
  }
}
