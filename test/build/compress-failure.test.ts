/**
 * A build whose compression fails (gzip made to fail here, for the largest
 * pack or for every pack: packs of small answers are the build's only
 * compression) rejects with that error where the build awaits what failed,
 * never with an unhandled rejection meanwhile, which would end the process
 * with a stack instead of the build's message.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/** Packs whose gzip fails, by size: set by each test. */
const failing = vi.hoisted(() => ({ gzipOver: Infinity }));

vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof import('node:zlib')>();
  const gzip = (bytes: Uint8Array, options: object, done: (error: Error | null, result?: Buffer) => void) => {
    if (bytes.length > failing.gzipOver) setImmediate(() => done(new Error('gzip: out of memory (injected)')));
    else zlib.gzip(bytes, options, done);
  };
  return { ...zlib, gzip, default: { ...zlib, gzip } };
});

// The setup file already loaded the build (test/helpers/temp.ts): load it again, over the mock.
vi.resetModules();
const { buildArtifacts } = await import('../../build/answers/artifacts.ts');
const { importArchive } = await import('../../build/archive/import.ts');
const { SAMPLE_SOURCE } = await import('../helpers/paths.ts');

describe('a build whose compression fails', () => {
  /** Rejections nobody handled, as the process saw them (vitest reports them too, but as errors, not failed tests). */
  const unheard: unknown[] = [];
  const hear = (reason: unknown) => unheard.push(reason);
  beforeAll(() => process.on('unhandledRejection', hear));
  afterAll(() => process.off('unhandledRejection', hear));

  const { archive, ids, facts } = importArchive(readFileSync(SAMPLE_SOURCE, 'utf8'));
  const source = { sha256: '0'.repeat(64), rows: 1, sample: true, revision: null };

  it.each([
    ['packs over 1 KiB', 1024],
    ['every pack', 0],
  ])('rejects with that error: %s', async (_, over) => {
    failing.gzipOver = over;
    await expect(buildArtifacts(archive, source, { ids, facts })).rejects.toThrow('gzip: out of memory (injected)');
    // What failed early is awaited late: give a rejection nobody heard the time to be reported.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unheard).toEqual([]);
  });

  it('builds once compression works again', async () => {
    failing.gzipOver = Infinity;
    const built = await buildArtifacts(archive, source, { ids, facts });
    expect(built.files.size).toBeGreaterThan(100);
  });
});
