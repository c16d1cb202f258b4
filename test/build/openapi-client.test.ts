/**
 * A client generated from the served /openapi.json with openapi-typescript,
 * as a user would make one, must type-check against a real answer of each
 * operation, and must refuse the shapes the spec does not have (a flattened
 * person match, a film match carrying `year`, a ceremony keyed by its year).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalServer, type LocalServer } from '../helpers/helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TSC = path.join(ROOT, 'node_modules/.bin/tsc');

/** One real lookup of each operation on the built sample, by the path template openapi-typescript keys it under. */
const LOOKUPS: [string, string][] = [
  ['/archive/apikey={apikey}', '/archive'],
  ['/archive/year={year}/apikey={apikey}', '/archive/year=1930'],
  ['/person/name={name}/apikey={apikey}', '/person/name=Emil%20Jannings'],
  ['/movie/name={name}/year={year}/apikey={apikey}', '/movie/name=Wings/year=1929'],
  ['/award/name={name}/apikey={apikey}', '/award/name=Actor'],
  ['/award/name={name}/year={year}/apikey={apikey}', '/award/name=Picture/year=1929'],
  ['/title/id={id}/apikey={apikey}', '/title/id=tt0018578'],
  ['/name/id={id}/apikey={apikey}', '/name/id=nm0417837'],
];

let local: LocalServer;
let dir: string;

/** Type-checks `source` beside the generated `api.ts`; the compiler's diagnostics, empty when it compiles. */
async function typecheck(name: string, source: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, source);
  const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--skipLibCheck', file];
  return promisify(execFile)(TSC, args, { cwd: dir }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout ?? String(error),
  );
}

const okType = (template: string) => `paths['${template}']['get']['responses'][200]['content']['application/json']`;

beforeAll(async () => {
  local = await startLocalServer();
  dir = await mkdtemp(path.join(os.tmpdir(), 'faa-openapi-client-'));
  const document = await (await fetch(`${local.baseUrl}/openapi.json`)).json();
  await writeFile(path.join(dir, 'api.ts'), astToString(await openapiTS(document)));
});

afterAll(async () => {
  await local?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a client generated from /openapi.json with openapi-typescript', () => {
  it('type-checks against one real answer of each operation', async () => {
    const lines = ["import type { paths } from './api.ts';"];
    for (const [i, [template, lookup]] of LOOKUPS.entries()) {
      const response = await fetch(`${local.baseUrl}${lookup}/apikey=${local.key}`);
      expect([lookup, response.status]).toEqual([lookup, 200]);
      lines.push(`export const answer${i}: ${okType(template)} = ${await response.text()};`);
    }
    expect(await typecheck('answers.ts', lines.join('\n'))).toBe('');
  });

  it('refuses a flattened person match, a film match with year and a ceremony keyed by its year', async () => {
    const person = await (await fetch(`${local.baseUrl}/person/name=Emil%20Jannings/apikey=${local.key}`)).json();
    const film = await (await fetch(`${local.baseUrl}/movie/name=Wings/year=1929/apikey=${local.key}`)).json();
    const ceremony = await (await fetch(`${local.baseUrl}/archive/year=1930/apikey=${local.key}`)).json();
    const { nomination, ...where } = person[0];
    const source = [
      "import type { paths } from './api.ts';",
      `export const flattened: ${okType(LOOKUPS[2][0])} = ${JSON.stringify([{ ...where, ...nomination }])};`,
      `export const withYear: ${okType(LOOKUPS[3][0])} = ${JSON.stringify([{ year: '1929', ...film[0] }])};`,
      `export const keyed: ${okType(LOOKUPS[1][0])} = ${JSON.stringify({ 1930: ceremony })};`,
    ].join('\n');
    const diagnostics = await typecheck('wrong.ts', source);
    // TS2353: a property the type does not have (primary beside year, year beside category); TS27xx: the array's members missing.
    expect(diagnostics).toMatch(/wrong\.ts\(2,\d+\): error TS2353: .*'"primary"' does not exist/);
    expect(diagnostics).toMatch(/wrong\.ts\(3,\d+\): error TS2353: .*'"year"' does not exist/);
    expect(diagnostics).toMatch(/wrong\.ts\(4,\d+\): error TS27\d\d/);
  });
});
