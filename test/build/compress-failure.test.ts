/**
 * A build whose compression fails (brotli made to fail here, for the whole
 * archive's answer or for every answer) rejects with that error where the
 * build awaits what failed, never with an unhandled rejection meanwhile,
 * which would end the process with a stack instead of the build's message.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

/** Answers whose brotli copy fails: set by each test. */
const failing = vi.hoisted(() => ({ brotliOver: Infinity }));

vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof import('node:zlib')>();
  const brotliCompress = (bytes: Uint8Array, options: object, done: (error: Error | null, result?: Buffer) => void) => {
    if (bytes.length > failing.brotliOver) setImmediate(() => done(new Error('brotli: out of memory (injected)')));
    else zlib.brotliCompress(bytes, options, done);
  };
  return { ...zlib, brotliCompress, default: { ...zlib, brotliCompress } };
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

  // Only the whole archive's answer is larger than this (a year's is a third of it or so).
  const wholeArchiveOnly = Math.floor(Buffer.byteLength(JSON.stringify(archive)) * 0.9);

  it.each([
    ['the whole archive\u2019s answer (a file of its own, awaited after the packs are sealed)', wholeArchiveOnly],
    ['every answer of 1 KiB or more', 1023],
  ])('rejects with that error: %s', async (_, over) => {
    failing.brotliOver = over;
    await expect(buildArtifacts(archive, source, { ids, facts })).rejects.toThrow('brotli: out of memory (injected)');
    // What failed early is awaited late: give a rejection nobody heard the time to be reported.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unheard).toEqual([]);
  });

  it('builds once compression works again', async () => {
    failing.brotliOver = Infinity;
    const built = await buildArtifacts(archive, source, { ids, facts });
    expect(built.files.size).toBeGreaterThan(100);
  });
});
