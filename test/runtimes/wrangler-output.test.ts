/**
 * What our Cloudflare commands pass on of wrangler's output: everything but
 * its offline noise (the Request.cf warning and the DNS error's stack trace,
 * which change nothing here), said once in one line instead.
 */
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { withoutOfflineNoise } from '../../cli/lib/wrangler.ts';

/** wrangler dev's first lines offline, as this machine printed them. */
const OFFLINE_START = [
  '[wrangler:warn] Unable to fetch the `Request.cf` object! Falling back to a default placeholder...',
  'Error: getaddrinfo ENOTFOUND workers.cloudflare.com',
  '    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:123:26)',
  '⎔ Starting local server...',
  '[wrangler:warn] Unable to fetch the `Request.cf` object! Falling back to a default placeholder...',
  'Error: getaddrinfo ENOTFOUND workers.cloudflare.com',
  '    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:123:26)',
  '[wrangler:info] Ready on http://127.0.0.1:18787',
  'Error: something else went wrong',
  '    at somewhere (file.js:1:1)',
];

it("passes wrangler's lines on, its offline noise said once in one line, any other error whole", async () => {
  const input = new PassThrough();
  const written: string[] = [];
  withoutOfflineNoise(input, (line) => written.push(line));
  input.end(`${OFFLINE_START.join('\n')}\n`);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(written).toEqual([
    '(offline: wrangler could not reach Cloudflare for the Request.cf object and uses a placeholder; nothing else changes)',
    '⎔ Starting local server...',
    '[wrangler:info] Ready on http://127.0.0.1:18787',
    'Error: something else went wrong',
    '    at somewhere (file.js:1:1)',
  ]);
});
