import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { componentSchemas, openApiDocument } from '../build/openapi.ts';
import { publicFiles } from '../build/public.ts';
import { MESSAGES } from '../src/core.ts';
import { ROUTES, template } from '../src/routes.ts';
import type { Manifest } from '../src/types.ts';
import { startLocalServer, type LocalServer } from './_local-server.ts';

type Operation = { operationId: string; parameters: { name: string; in: string; description: string }[]; responses: Record<string, any> };
type Doc = { openapi: string; info: { version: string; description: string }; servers: { url: string }[]; paths: Record<string, { get: Operation }>; components: { schemas: Record<string, any> } };

const SPEC_IDS = ['allCeremonies', 'ceremonyByYear', 'personByName', 'filmByNameAndYear', 'categoryByName', 'categoryByNameAndYear'];
const document = () => openApiDocument({ yearRange: [1929, 2026] }) as unknown as Doc;
const operations = (doc: Doc) => Object.values(doc.paths).map((item) => item.get);

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document, version 1.0.0', async () => {
    const doc = document();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('has exactly the six operation ids of the spec', () => {
    expect(operations(document()).map((o) => o.operationId).sort()).toEqual([...SPEC_IDS].sort());
  });

  it('has a path for every route, exactly its template', () => {
    const doc = document();
    for (const route of ROUTES) expect(doc.paths[template(route)]?.get.operationId).toBe(route.id);
  });

  it('mentions every alias root in its operation', () => {
    const doc = document();
    for (const route of ROUTES) {
      for (const root of route.roots.slice(1)) expect(JSON.stringify(doc.paths[template(route)].get)).toContain(template(route, root));
    }
  });

  it('explains the name=, year= and apikey= segment shapes on every parameter', () => {
    for (const op of operations(document())) {
      for (const p of op.parameters) {
        expect(p.in).toBe('path');
        expect(p.description).toContain(`\`${p.name}=`);
      }
      expect(op.parameters.map((p) => p.name).at(-1)).toBe('apikey');
    }
  });

  it('documents 200, 304, 403, 404, 405, 429 with Retry-After and 500 on every operation', () => {
    for (const op of operations(document())) {
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '304', '403', '404', '405', '429', '500']));
      expect(op.responses['429'].headers['Retry-After']).toBeDefined();
      expect(op.responses['429'].content['application/json'].schema.$ref).toBe('#/components/schemas/RateLimitError');
      expect(op.responses['500'].content['application/json'].schema.properties.error.const).toBe(MESSAGES.fetchError);
    }
  });

  it('documents 400 exactly on the operations that take parameters', () => {
    const doc = document();
    for (const route of ROUTES) expect('400' in doc.paths[template(route)].get.responses).toBe(route.params.length > 0);
  });

  it('has the component schemas, closed, with notes optional', () => {
    const schemas = document().components.schemas;
    for (const name of ['Nomination', 'Category', 'Ceremony', 'PersonMatch', 'FilmMatch', 'CategoryMatch', 'CategoryYearMatch', 'Error', 'RateLimitError']) {
      expect(schemas).toHaveProperty(name);
    }
    for (const name of ['Nomination', 'PersonMatch', 'FilmMatch']) {
      expect(schemas[name].additionalProperties).toBe(false);
      expect(schemas[name].properties).toHaveProperty('notes');
      expect(schemas[name].required).not.toContain('notes');
      expect(schemas[name].required).toContain('won');
    }
    expect(schemas.RateLimitError.required).toEqual(['error', 'limit', 'retryAfter']);
  });

  it('follows a field added to the types without another copy to edit', () => {
    const source = `
      /** One nomination. */
      export interface Nomination {
        primary: string[];
        secondary: string[];
        won: boolean;
        /** Points. */
        score?: number;
      }
      export interface Category { category: string; nominations: Nomination[] }
      export type Ceremony = Category[];
      export type Archive = Record<string, Ceremony>;
      export interface PersonMatch extends Nomination { year: string; category: string }
      export interface FilmMatch extends Nomination { year: string; category: string }
      export interface CategoryMatch { year: string; category: string; nominations: Nomination[] }
      export type CategoryYearMatch = CategoryMatch;
      export interface ErrorBody { error: string }
      export interface RateLimitErrorBody extends ErrorBody { limit: string; retryAfter: number }`;
    const schemas = componentSchemas(source);
    expect(schemas.Nomination.properties).toHaveProperty('score', { description: 'Points.', type: 'number' });
    expect(schemas.PersonMatch.properties).toHaveProperty('score');
    expect(schemas.Nomination.required).toEqual(['primary', 'secondary', 'won']);
  });

  it('refuses a type it cannot express', () => {
    expect(() => componentSchemas('export interface Nomination { primary: string | number }')).toThrow(/cannot express the type `string \| number` of Nomination.primary/);
  });

  it('takes its servers from PUBLIC_BASE_URL and its years from the manifest', () => {
    const manifest = { yearRange: [1929, 1930] } as Manifest;
    const file = publicFiles(manifest, { PUBLIC_BASE_URL: 'https://awards.example.org/' }).get('openapi.json')!;
    const doc = JSON.parse(new TextDecoder().decode(file)) as Doc;
    expect(doc.servers).toEqual([{ url: 'https://awards.example.org' }]);
    expect(doc.info.description).toContain('1929 to 1930');
    const fallback = JSON.parse(new TextDecoder().decode(publicFiles(manifest, {}).get('openapi.json')!)) as Doc;
    expect(fallback.servers).toEqual([{ url: 'http://127.0.0.1:8888' }]);
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
    expect(operations(doc).map((o) => o.operationId).sort()).toEqual([...SPEC_IDS].sort());
    expect(doc.info.description).toContain(`${manifest.yearRange[0]} to ${manifest.yearRange[1]}`);
  });

  it('is served publicly at /openapi.json, without a key', async () => {
    const response = await fetch(`${local.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const doc = (await response.json()) as Doc;
    expect(doc.openapi).toBe('3.1.0');
  });
});
