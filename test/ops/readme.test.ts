/**
 * The README's example requests (`    GET /path/apikey=KEY` lines of its API
 * section) answer 200 on the built-in sample, the data a fresh `npm start`
 * serves. (test/api/behaviour.test.ts holds their printed answers against the
 * full archive.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROUTES, template } from '../../src/shared/routes.ts';
import { readmeExamples } from '../helpers/readme.ts';
import { type LocalServer, startLocalServer } from '../helpers/servers.ts';

let local: LocalServer;
beforeAll(async () => {
  local = await startLocalServer();
});
afterAll(() => local?.close());

it('has one example of each lookup of the route table, and each answers 200 on the built-in sample', async () => {
  const examples = readmeExamples();
  expect(examples.map((e) => e.request.replace(/=[^/]*/g, '=')).sort()).toEqual(
    ROUTES.map((r) => template(r).replace(/=\{[^}]*\}/g, '=')).sort(),
  );
  for (const { request } of examples) {
    const response = await fetch(local.baseUrl + request.replace('apikey=KEY', `apikey=${local.key}`));
    expect([request, response.status]).toEqual([request, 200]);
  }
});
