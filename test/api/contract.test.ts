import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/shared/messages.ts';
import { examplePath, ROUTES } from '../../src/shared/routes.ts';
import { operationIdFor, validateResponse } from './contract.ts';
import { type LocalServer, startLocalServer } from '../helpers/servers.ts';

describe('operationIdFor', () => {
  it('maps each route’s example path to its operation id', () => {
    for (const route of ROUTES) expect(operationIdFor(examplePath(route, 'k'))).toBe(route.id);
  });

  it('maps the oscars alias to the same operation as archive', () => {
    expect(operationIdFor('/oscars/year=1930/apikey=k')).toBe('ceremonyByYear');
    expect(operationIdFor('http://localhost:8888/oscars/apikey=k?x=1')).toBe('allCeremonies');
  });

  it('gives null for the root and for unknown paths', () => {
    expect(operationIdFor('/')).toBeNull();
    expect(operationIdFor('/nothing/here')).toBeNull();
    expect(operationIdFor('/person/apikey=k')).toBeNull();
  });
});

describe('validateResponse', () => {
  let local: LocalServer;
  const get = async (path: string) => {
    const response = await fetch(local.baseUrl + path);
    return { status: response.status, body: await response.json() };
  };
  beforeAll(async () => {
    local = await startLocalServer();
  });
  afterAll(() => local?.close());

  it('accepts the real answers of the built sample', async () => {
    for (const path of [
      `/archive/apikey=${local.key}`,
      `/archive/year=1930/apikey=${local.key}`,
      `/person/name=Emil%20Jannings/apikey=${local.key}`,
      `/movie/name=Wings/year=1929/apikey=${local.key}`,
      `/award/name=Actor/apikey=${local.key}`,
      `/award/name=Picture/year=1929/apikey=${local.key}`,
    ]) {
      const { status, body } = await get(path);
      expect(status, path).toBe(200);
      expect(validateResponse(operationIdFor(path), status, body), path).toEqual([]);
    }
  });

  it('accepts the real error bodies', async () => {
    for (const path of [
      `/person/name=Nobody%20At%20All/apikey=${local.key}`,
      `/archive/year=abc/apikey=${local.key}`,
      `/person/name=%E0%A4%A/apikey=${local.key}`,
      '/person/name=Wings/apikey=faa_not-a-key',
      '/no/such/path',
    ]) {
      const { status, body } = await get(path);
      expect(status, path).toBeGreaterThanOrEqual(400);
      expect(validateResponse(operationIdFor(path), status, body), path).toEqual([]);
    }
  });

  it('rejects a nomination with an extra field', async () => {
    const path = `/person/name=Emil%20Jannings/apikey=${local.key}`;
    const { body } = await get(path);
    body[0].rating = 5;
    expect(validateResponse('personByName', 200, body).join('\n')).toMatch(/additional properties/);
  });

  it('rejects won given as a string', async () => {
    const { body } = await get(`/archive/year=1930/apikey=${local.key}`);
    body[0].nominations[0].won = 'true';
    expect(validateResponse('ceremonyByYear', 200, body).join('\n')).toMatch(
      /\/0\/nominations\/0\/won must be boolean/,
    );
  });

  it('rejects a ceremony wrapped in an object keyed by its year', async () => {
    const { body } = await get(`/archive/year=1930/apikey=${local.key}`);
    expect(validateResponse('ceremonyByYear', 200, { 1930: body })).not.toEqual([]);
  });

  it('rejects a flattened person element, and a film element carrying year', async () => {
    const person = (await get(`/person/name=Emil%20Jannings/apikey=${local.key}`)).body;
    const { nomination, ...rest } = person[0];
    expect(validateResponse('personByName', 200, [{ ...rest, ...nomination }]).join('\n')).toMatch(
      /must have required property 'nomination'/,
    );
    const film = (await get(`/movie/name=Wings/year=1929/apikey=${local.key}`)).body;
    expect(validateResponse('filmByNameAndYear', 200, film)).toEqual([]);
    expect(validateResponse('filmByNameAndYear', 200, [{ year: '1929', ...film[0] }]).join('\n')).toMatch(
      /additional properties/,
    );
  });

  it('accepts a nomination without secondary or notes, and refuses one without won', () => {
    expect(
      validateResponse('personByName', 200, [
        { year: '1929', category: 'X', nomination: { primary: ['A'], won: false } },
      ]),
    ).toEqual([]);
    expect(
      validateResponse('personByName', 200, [
        { year: '1929', category: 'X', nomination: { primary: ['A'], secondary: [] } },
      ]),
    ).not.toEqual([]);
  });

  it('rejects a 404 body with another operation’s message', () => {
    expect(validateResponse('personByName', 404, { error: 'Movie not found' })).not.toEqual([]);
    expect(validateResponse('filmByNameAndYear', 404, { error: 'Movie not found' })).toEqual([]);
  });

  it('rejects a 429 body without retryAfter, and a status the operation does not document', () => {
    expect(
      validateResponse('allCeremonies', 429, { error: MESSAGES.tooMany, limit: '60 requests per minute' }),
    ).not.toEqual([]);
    expect(validateResponse('allCeremonies', 400, { error: MESSAGES.badName })).toEqual([
      'allCeremonies does not document a 400 answer',
    ]);
    expect(validateResponse('allCeremonies', 404, { error: 'Data not found for the specified year' })).toEqual([
      'allCeremonies does not document a 404 answer',
    ]);
  });

  it('accepts an empty 304 and refuses a 304 with a body', () => {
    expect(validateResponse('allCeremonies', 304, null)).toEqual([]);
    expect(validateResponse('allCeremonies', 304, {})).not.toEqual([]);
  });

  it('checks error bodies outside the operations against Error', () => {
    expect(validateResponse(null, 404, { error: MESSAGES.notFound })).toEqual([]);
    expect(validateResponse(null, 404, { message: MESSAGES.notFound })).not.toEqual([]);
  });
});
