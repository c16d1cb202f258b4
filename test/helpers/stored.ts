/** What a build stored, read as the tests read it: from the files the manifest names. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { dataPath, MANIFEST_PATH, parseRef } from '../../src/store/refs.ts';
import type { CategoryIndex, Manifest } from '../../src/shared/types.ts';

/** The category index of the build in `dist`: its first line (names, answers across all years, `joined`, elements). */
export async function storedCategoryIndex(dist: string): Promise<CategoryIndex> {
  const manifest = JSON.parse(await readFile(path.join(dist, MANIFEST_PATH), 'utf8')) as Manifest;
  const text = await readFile(path.join(dist, dataPath(parseRef(manifest.categories)!.at.file)!), 'utf8');
  return JSON.parse(text.slice(0, text.indexOf('\n'))) as CategoryIndex;
}
