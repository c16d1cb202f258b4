import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../build/site/openapi.ts';
import { publicFiles } from '../../build/site/public.ts';
import { MESSAGES } from '../../src/shared/messages.ts';
import { ROUTES, SHAPES, template } from '../../src/shared/routes.ts';
import { RANKING, RANKING_ERRORS } from '../../src/client/client.ts';
import type { Manifest } from '../../src/shared/types.ts';
import { type LocalServer, startLocalServer } from '../helpers/servers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const REDOCLY = path.join(ROOT, 'node_modules/.bin/redocly');
/** Runs Redocly; its findings are on stdout whatever its exit code says. */
const redocly = (args: string[]) =>
  promisify(execFile)(REDOCLY, args, {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  }).catch((error: { stdout?: string; stderr?: string }) => ({
    stdout: error.stdout ?? '',
    stderr: error.stderr ?? '',
  }));

type Operation = {
  operationId: string;
  tags: string[];
  parameters: { name: string; in: string; required: boolean; description: string }[];
  responses: Record<string, any>;
};
type Doc = {
  openapi: string;
  info: { version: string; description: string };
  servers: { url: string }[];
  tags: { name: string }[];
  paths: Record<string, { get: Operation }>;
  components: { schemas: Record<string, any> };
};

const SPEC_IDS = [
  'allCeremonies',
  'ceremonyByYear',
  'personByName',
  'filmByNameAndYear',
  'categoryByName',
  'categoryByNameAndYear',
];
/** The lookups by IMDb id, search and the category list, beyond the spec's six. */
const ID_IDS = ['titleById', 'nameById'];
const FINDING_IDS = ['search', 'categories'];
const DATASET_IDS = ['datasetList', 'datasetFile'];
const RECORD_IDS = ['filmRecord', 'peopleRecord', 'ceremonyRecord', 'awardList', 'awardRecord', 'rankings'];
const document = () => openApiDocument({ yearRange: [1929, 2026] }) as unknown as Doc;
/** The lookups: every operation but the keyless health check, which has its own test. */
const operations = (doc: Doc) =>
  Object.values(doc.paths)
    .map((item) => item.get)
    .filter((o) => o.operationId !== 'health');

describe('the OpenAPI document', () => {
  // Whether it is valid OpenAPI 3.1 is Redocly's to say, on the built document below.
  it('is OpenAPI 3.1.0, version 1.0.0', () => {
    const doc = document();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('tags every operation with a tag it declares', () => {
    const doc = document();
    const declared = doc.tags.map((t) => t.name);
    for (const item of Object.values(doc.paths))
      expect([item.get.operationId, item.get.tags.filter((t) => !declared.includes(t))]).toEqual([
        item.get.operationId,
        [],
      ]);
  });

  it('has exactly the six operation ids of the spec, the two lookups by IMDb id, search, the category list, the dataset, the records and the rankings', () => {
    expect(
      operations(document())
        .map((o) => o.operationId)
        .sort(),
    ).toEqual([...SPEC_IDS, ...ID_IDS, ...FINDING_IDS, ...DATASET_IDS, ...RECORD_IDS].sort());
  });

  it('gives each id lookup its id pattern, and a 400 naming the form it expects', () => {
    const doc = document();
    const cases: [string, string, string, string][] = [
      ['titleById', 'tt0120338', 'nm0000658', MESSAGES.badTitleId],
      ['nameById', 'nm0000658', 'tt0120338', MESSAGES.badNameId],
      ['filmRecord', 'tt0120338', 'nm0000658', MESSAGES.badTitleId],
      ['peopleRecord', 'nm0000658', 'tt0120338', MESSAGES.badNameId],
      ['awardRecord', 'best-picture', 'Best Picture', MESSAGES.badAwardId],
    ];
    for (const [id, good, bad, message] of cases) {
      const op = operations(doc).find((o) => o.operationId === id)!;
      const pattern = new RegExp((op.parameters[0] as unknown as { schema: { pattern: string } }).schema.pattern);
      expect([id, pattern.test(good), pattern.test(bad), pattern.test('co0028775')]).toEqual([
        id,
        true,
        false,
        id !== 'titleById' && id !== 'filmRecord',
      ]);
      expect(JSON.stringify(op.responses['400'])).toContain(JSON.stringify(message));
    }
  });

  it('describes a ranking’s optional segments with their bounds, and a 400 naming each', () => {
    const op = operations(document()).find((o) => o.operationId === 'rankings')! as Operation & {
      description: string;
      'x-segments': { name: string; schema: Record<string, unknown> }[];
    };
    const segments = Object.fromEntries(op['x-segments'].map((s) => [s.name, s.schema]));
    expect(Object.keys(segments)).toEqual(ROUTES.find((r) => r.id === 'rankings')!.options);
    expect(Object.keys(segments)).toEqual(RANKING.params); // what the ranking maker reads
    expect(segments.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
    expect(segments.of).toMatchObject({ enum: ['people', 'companies', 'films'] });
    for (const name of Object.keys(segments))
      expect([name, op.description]).toEqual([name, expect.stringContaining(`\`${name}\``)]);
    for (const message of Object.values(RANKING_ERRORS))
      expect(JSON.stringify(op.responses['400'])).toContain(JSON.stringify(message));
  });

  it('has a path for every route, exactly its template', () => {
    const doc = document();
    for (const route of ROUTES) expect(doc.paths[template(route)]?.get.operationId).toBe(route.id);
  });

  it('mentions every alias root in its operation', () => {
    const doc = document();
    for (const route of ROUTES) {
      for (const root of route.roots.slice(1))
        expect(JSON.stringify(doc.paths[template(route)].get)).toContain(template(route, root));
    }
  });

  it('explains the name=, year= and apikey= segment shapes on every parameter, each a required path parameter', () => {
    for (const op of operations(document())) {
      for (const p of op.parameters) {
        expect([p.name, p.in, p.required]).toEqual([p.name, 'path', true]);
        expect(p.description).toContain(`\`${p.name}=`);
      }
      expect(op.parameters.map((p) => p.name).at(-1)).toBe('apikey');
    }
  });

  it('documents 200, 304, 403, 405, 429 with Retry-After and 500 on every operation, and 404 on all but the whole archive, search, the category list, the dataset list and the award list', () => {
    for (const op of operations(document())) {
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '304', '403', '405', '429', '500']));
      expect([op.operationId, '404' in op.responses]).toEqual([
        op.operationId,
        !['allCeremonies', ...FINDING_IDS, 'datasetList', 'awardList'].includes(op.operationId),
      ]);
      expect(op.responses['429'].headers['Retry-After']).toBeDefined();
      expect(op.responses['429'].content['application/json'].schema.$ref).toBe('#/components/schemas/RateLimitError');
      expect(op.responses['500'].content['application/json'].schema.properties.error.const).toBe(MESSAGES.fetchError);
    }
  });

  it('documents /health without a key: 200 with the Health shape, 503 with the Error shape, no parameters', () => {
    const doc = document();
    const health = doc.paths['/health'].get;
    expect(health.operationId).toBe('health');
    expect(health.parameters ?? []).toEqual([]);
    expect(Object.keys(health.responses).sort()).toEqual(['200', '405', '503']);
    expect(health.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/Health');
    expect(health.responses['503'].content['application/json'].schema.properties.error.anyOf).toEqual([
      { const: MESSAGES.unavailable },
      { const: MESSAGES.keysUnavailable },
    ]);
    expect(doc.components.schemas.Health.required).toEqual(['status', 'archive']);
    expect(doc.components.schemas.ArchiveHealth.required).toEqual([
      'revision',
      'sample',
      'firstYear',
      'lastYear',
      'years',
      'categories',
      'nominations',
    ]);
  });

  it('documents 400 exactly on the operations that take parameters or optional segments', () => {
    const doc = document();
    for (const route of ROUTES)
      expect('400' in doc.paths[template(route)].get.responses).toBe(
        route.params.length > 0 || route.options !== undefined,
      );
  });

  // Section 2 of the spec, table by table: each shape's fields, and which of them are required.
  const SPEC_SHAPES: Record<string, { fields: string[]; required: string[] }> = {
    Nomination: { fields: ['primary', 'secondary', 'won', 'notes'], required: ['primary', 'won'] },
    Category: { fields: ['category', 'nominations'], required: ['category', 'nominations'] },
    CategoryMatch: { fields: ['year', 'category', 'nominations'], required: ['year', 'category', 'nominations'] },
    PersonMatch: { fields: ['year', 'category', 'nomination'], required: ['year', 'category', 'nomination'] },
    FilmMatch: { fields: ['category', 'nomination'], required: ['category', 'nomination'] },
    CategoryYearMatch: { fields: ['category', 'nominations'], required: ['category', 'nominations'] },
    Error: { fields: ['error'], required: ['error'] },
    RateLimitError: { fields: ['error', 'limit', 'retryAfter'], required: ['error', 'limit', 'retryAfter'] },
  };

  it('names its object schemas as the spec does, with exactly the spec’s fields and required fields, closed', () => {
    const schemas = document().components.schemas;
    for (const [name, shape] of Object.entries(SPEC_SHAPES)) {
      expect([name, Object.keys(schemas[name].properties)]).toEqual([name, shape.fields]);
      expect([name, [...schemas[name].required].sort()]).toEqual([name, [...shape.required].sort()]);
      expect([name, schemas[name].additionalProperties]).toEqual([name, false]);
    }
    expect(schemas.Ceremony).toMatchObject({ type: 'array', items: { $ref: '#/components/schemas/Category' } });
  });

  it('answers each operation with the shape the spec gives it', () => {
    const doc = document();
    const ok = (id: string) =>
      operations(doc).find((o) => o.operationId === id)!.responses['200'].content['application/json'].schema;
    const arrayOf = (name: string) => ({ type: 'array', items: { $ref: `#/components/schemas/${name}` } });
    expect(ok('allCeremonies')).toEqual({ $ref: '#/components/schemas/Archive' });
    expect(ok('ceremonyByYear')).toEqual({ $ref: '#/components/schemas/Ceremony' });
    expect(ok('personByName')).toMatchObject(arrayOf('PersonMatch'));
    expect(ok('filmByNameAndYear')).toMatchObject(arrayOf('FilmMatch'));
    expect(ok('categoryByName')).toMatchObject(arrayOf('CategoryMatch'));
    expect(ok('categoryByNameAndYear')).toMatchObject(arrayOf('CategoryYearMatch'));
    expect('404' in operations(doc).find((o) => o.operationId === 'allCeremonies')!.responses).toBe(false);
  });

  it('writes the shapes of the service description and the reference page with the same fields as its schemas', () => {
    const schemas = document().components.schemas;
    for (const [name, text] of Object.entries(SHAPES)) {
      if (!schemas[name]?.properties) continue;
      const fields = [...text.matchAll(/"(\w+)"(\??):/g)].map((m) => m[1] + m[2]);
      const want = Object.keys(schemas[name].properties).map((f) => (schemas[name].required.includes(f) ? f : `${f}?`));
      expect([name, fields]).toEqual([name, want]);
    }
  });

  it('takes its servers from PUBLIC_BASE_URL and its years from the manifest', () => {
    const manifest = { yearRange: [1929, 1930] } as Manifest;
    const file = publicFiles(manifest, { PUBLIC_BASE_URL: 'https://awards.example.org/' }).get('openapi.json')!;
    const doc = JSON.parse(new TextDecoder().decode(file)) as Doc;
    expect(doc.servers).toEqual([{ url: 'https://awards.example.org' }]);
    expect(doc.info.description).toContain('1929 to 1930');
    const fallback = JSON.parse(new TextDecoder().decode(publicFiles(manifest, {}).get('openapi.json')!)) as Doc;
    // Relative: right on whatever host and port the document is served from.
    expect(fallback.servers).toEqual([{ url: '/' }]);
  });
});

describe('the built OpenAPI document', () => {
  let local: LocalServer;
  beforeAll(async () => {
    local = await startLocalServer();
  });
  afterAll(() => local?.close());

  it('is written to the root of dist/ by the build', async () => {
    const doc = JSON.parse(await readFile(path.join(local.dist, 'openapi.json'), 'utf8')) as Doc;
    const manifest = JSON.parse(await readFile(path.join(local.dist, '_data/manifest.json'), 'utf8')) as Manifest;
    expect(
      operations(doc)
        .map((o) => o.operationId)
        .sort(),
    ).toEqual([...SPEC_IDS, ...ID_IDS, ...FINDING_IDS, ...DATASET_IDS, ...RECORD_IDS].sort());
    expect(doc.info.description).toContain(`${manifest.yearRange[0]} to ${manifest.yearRange[1]}`);
  });

  // Redocly's `struct` rule checks the document against OpenAPI 3.1; the recommended
  // rules add refs, path parameters, unique ids and examples against their schemas.
  it('is valid and lint-clean: no error and no warning under Redocly’s recommended rules', async () => {
    const { stdout } = await redocly([
      'lint',
      path.join(local.dist, 'openapi.json'),
      '--config',
      path.join(ROOT, 'redocly.yaml'),
      '--format=json',
    ]);
    const report = JSON.parse(stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('is served publicly at /openapi.json, without a key', async () => {
    const response = await fetch(`${local.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const doc = (await response.json()) as Doc;
    expect(doc.openapi).toBe('3.1.0');
  });
});
