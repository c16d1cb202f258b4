/** `npm start` as a new user meets it on a fresh clone: build on first start, a development key, working examples. */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { cleanCopy, rawRequest, startServer, tempDir } from './helpers.ts';

// A fresh clone: no ARCHIVE_SOURCE (startServer drops it) and no data/cache/, so the sample is served.
let clone: string;
beforeAll(async () => {
  clone = await cleanCopy('start-clone');
});
const start = (env: Record<string, string>) => startServer(clone, env);

it('builds when dist is missing, makes a development key and prints three example URLs that work', async () => {
  const dir = await tempDir('start');
  const port = String(20000 + Math.floor(Math.random() * 20000));
  const env = { PORT: port, DIST_DIR: path.join(dir, 'dist'), KEYS_FILE: path.join(dir, 'keys.json') };
  const first = await start(env);
  try {
    const out = first.output();
    expect(out).toContain('building: dist/ is missing');
    expect(out).toContain('SMALL SAMPLE');
    const key = /development key: (faa_\S+)/.exec(out)![1];
    const urls = [...out.matchAll(/curl '(http:\/\/127\.0\.0\.1:\d+(\/[^']+))'/g)].map((m) => m[2]);
    expect(urls).toHaveLength(3);
    for (const u of urls) {
      expect(u).toContain(`apikey=${key}`);
      expect((await rawRequest(Number(port), 'GET', u)).status).toBe(200);
    }
    // The README's Quick start examples answer on the same default data.
    const quickStart = (await readFile(path.join(clone, 'README.md'), 'utf8')).split('\n## ')[1];
    const documented = [...quickStart.matchAll(/curl "http:\/\/127\.0\.0\.1:8888(\/[^"]+)\/apikey=\$\(cat data\/dev-key\.txt\)"/g)].map((m) => m[1]);
    expect(documented.length).toBeGreaterThanOrEqual(3);
    for (const u of documented) expect({ u, status: (await rawRequest(Number(port), 'GET', `${u}/apikey=${key}`)).status }).toEqual({ u, status: 200 });
    // The access log never shows the whole key.
    await rawRequest(Number(port), 'GET', urls[0]);
    await new Promise((r) => setTimeout(r, 100));
    const accessLog = first.output().split('\n').filter((l) => l.startsWith('GET '));
    expect(accessLog.length).toBeGreaterThanOrEqual(4);
    for (const line of accessLog) expect(line).not.toContain(key);
  } finally {
    await first.stop();
  }
  const second = await start(env);
  try {
    expect(second.output()).not.toContain('building:');
    expect(second.output()).not.toContain('made a development key');
  } finally {
    await second.stop();
  }
});
