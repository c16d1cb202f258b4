/**
 * `npm start`'s build step: builds dist/ when it is missing or stale, except
 * that a dist/ holding a real archive is served as it is when no source is
 * given (rebuilding it from the sample would silently lose data), and says
 * which archive it serves.
 */
import { build } from './build.ts';
import { changedInput, describeDist, readDist, staleness, type DistState } from './dist-state.ts';
import { resolveSource } from './archive/source.ts';

/** Makes dist/ current where it can; a refused build throws BuildRefused. */
export async function prepareDist(dist: string, log: (line: string) => void = console.log): Promise<DistState> {
  const held = await readDist(dist);
  const source = await resolveSource(undefined);
  let rebuilt = false;
  // A dist/ whose manifest is damaged cannot be served as it is: the
  // build below repairs it, or refuses to put the sample over it.
  if (held && !held.damaged && !held.source.sample && source.via === 'sample') {
    log(
      'no ARCHIVE_SOURCE and no data/cache/oscars.csv: serving dist/ as it is rather than rebuilding it from the sample',
    );
    const changed = await changedInput(held.builtMs);
    if (changed) log(`${changed}; set ARCHIVE_SOURCE=/path/to/oscars.csv to rebuild dist/ with it`);
  } else {
    const reason = await staleness(held, source);
    if (reason) {
      log(`building: ${reason}`);
      await build({ out: dist, log });
      rebuilt = true;
    }
  }
  const served = rebuilt ? (await readDist(dist))! : held!;
  log(`serving ${describeDist(served)}`);
  return served;
}
