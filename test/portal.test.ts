import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalFiles } from '../build/portal-files.ts';
import { Keys, MemoryKeyBackend, type KeyBackend } from '../src/keys.ts';
import { createPortal, MAX_BODY_BYTES, PORTAL_MESSAGES, type PortalOptions } from '../src/portal.ts';
import { nodePortal } from '../src/server/portal.node.ts';
import { createNodeServer } from '../src/server/server.node.ts';

const ORIGIN = 'https://api.example.org';

function setup(options: Partial<PortalOptions> = {}) {
  const keys = options.keys ?? new Keys(new MemoryKeyBackend());
  const lines: string[] = [];
  const portal = createPortal({ log: (line) => lines.push(line), ...options, keys });
  return { keys, portal, lines };
}

function post(path: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`${ORIGIN}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function send(portal: ReturnType<typeof createPortal>, request: Request, ip = '203.0.113.7') {
  const response = await portal.handle(request, ip);
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text ? JSON.parse(text) : null };
}

describe('issuing a key', () => {
  it('answers 201 with a key that works', async () => {
    const { portal, keys } = setup();
    const out = await send(portal, post('/portal/keys', { email: 'ada@example.org' }));
    expect(out.status).toBe(201);
    expect(out.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(out.headers.get('cache-control')).toBe('no-store');
    expect(out.json.apiKey).toMatch(/^faa_[A-Za-z0-9_-]{32}$/);
    expect(await keys.verify(out.json.apiKey)).toBe(true);
  });

  it('refuses an e-mail address that does not look like one with a 400', async () => {
    const { portal } = setup();
    for (const email of ['', 'ada', 'ada@', '@example.org', 'ada@example', 'a b@example.org', 42, null]) {
      const out = await send(portal, post('/portal/keys', { email }));
      expect(out.status, String(email)).toBe(400);
      expect(out.json.error).toBe(PORTAL_MESSAGES.badEmail);
    }
    expect((await send(portal, post('/portal/keys', {}))).json.error).toBe(PORTAL_MESSAGES.badEmail);
  });

  it('does not hand out a second key for the same address, nor reveal the first', async () => {
    const { portal } = setup();
    const first = await send(portal, post('/portal/keys', { email: 'ada@example.org' }));
    const again = await send(portal, post('/portal/keys', { email: 'Ada@Example.org' }));
    expect(again.status).toBe(409);
    expect(again.json.error).toMatch(/already has an active key.*Rotate it with the current key, or revoke it/);
    expect(again.json).not.toHaveProperty('apiKey');
    expect(again.text).not.toContain(first.json.apiKey);
    expect(again.text).not.toContain(first.json.apiKey.slice(0, 12));
  });

  it('issues a new key for an address whose key was revoked', async () => {
    const { portal } = setup();
    const first = await send(portal, post('/portal/keys', { email: 'ada@example.org' }));
    await send(portal, post('/portal/keys/revoke', { apiKey: first.json.apiKey }));
    const second = await send(portal, post('/portal/keys', { email: 'ada@example.org' }));
    expect(second.status).toBe(201);
    expect(second.json.apiKey).not.toBe(first.json.apiKey);
  });
});

describe('rotating a key', () => {
  it('answers a new key and the old one stops working', async () => {
    const { portal, keys } = setup();
    const old = (await send(portal, post('/portal/keys', { email: 'ada@example.org' }))).json.apiKey;
    const out = await send(portal, post('/portal/keys/rotate', { apiKey: old }));
    expect(out.status).toBe(200);
    expect(out.json.apiKey).toMatch(/^faa_/);
    expect(out.json.apiKey).not.toBe(old);
    expect(await keys.verify(old)).toBe(false);
    expect(await keys.verify(out.json.apiKey)).toBe(true);
  });

  it('keeps the owner: the address still has one active key after a rotation', async () => {
    const { portal, keys } = setup();
    const old = (await send(portal, post('/portal/keys', { email: 'ada@example.org' }))).json.apiKey;
    await send(portal, post('/portal/keys/rotate', { apiKey: old }));
    expect((await keys.list()).filter((r) => !r.revoked)).toMatchObject([{ email: 'ada@example.org' }]);
    expect((await send(portal, post('/portal/keys', { email: 'ada@example.org' }))).status).toBe(409);
  });

  it('needs a valid current key: 403 for an unknown, revoked or already rotated key', async () => {
    const { portal } = setup();
    const old = (await send(portal, post('/portal/keys', { email: 'ada@example.org' }))).json.apiKey;
    await send(portal, post('/portal/keys/rotate', { apiKey: old }));
    for (const apiKey of [old, 'faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'not-a-key']) {
      const out = await send(portal, post('/portal/keys/rotate', { apiKey }));
      expect(out.status, apiKey).toBe(403);
      expect(out.json).toEqual({ error: PORTAL_MESSAGES.forbidden });
    }
  });

  it('says what is missing when the body has no key: 400', async () => {
    const { portal } = setup();
    for (const body of [{}, { apiKey: 7 }, { apiKey: '' }, { key: 'faa_x' }]) {
      const out = await send(portal, post('/portal/keys/rotate', body));
      expect(out.status).toBe(400);
      expect(out.json.error).toBe(PORTAL_MESSAGES.missingKey);
    }
  });
});

describe('revoking a key', () => {
  it('answers {"revoked": true} and the key stops working', async () => {
    const { portal, keys } = setup();
    const key = (await send(portal, post('/portal/keys', { email: 'ada@example.org' }))).json.apiKey;
    const out = await send(portal, post('/portal/keys/revoke', { apiKey: key }));
    expect(out.status).toBe(200);
    expect(out.json).toEqual({ revoked: true });
    expect(await keys.verify(key)).toBe(false);
  });

  it('needs a valid current key: revoking twice or a made-up key is 403', async () => {
    const { portal } = setup();
    const key = (await send(portal, post('/portal/keys', { email: 'ada@example.org' }))).json.apiKey;
    await send(portal, post('/portal/keys/revoke', { apiKey: key }));
    expect((await send(portal, post('/portal/keys/revoke', { apiKey: key }))).status).toBe(403);
    const made = await send(portal, post('/portal/keys/revoke', { apiKey: `${key.slice(0, 12)}${'A'.repeat(24)}` }));
    expect(made.status).toBe(403);
    expect(made.json.error).toBe(PORTAL_MESSAGES.forbidden);
  });
});

describe('request rules', () => {
  it('refuses a body that is not JSON with a 400', async () => {
    const { portal } = setup();
    for (const body of ['{"email": ', 'email=ada@example.org', '', '[]', '"ada@example.org"', 'null']) {
      const out = await send(portal, post('/portal/keys', body));
      expect(out.status, body).toBe(400);
      expect(out.json.error).toBe(PORTAL_MESSAGES.badJson);
    }
  });

  it('refuses bytes that are not UTF-8 with a 400', async () => {
    const { portal } = setup();
    const request = new Request(`${ORIGIN}/portal/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expect((await send(portal, request)).status).toBe(400);
  });

  it(`refuses a body over ${MAX_BODY_BYTES} bytes with a 413, declared or not`, async () => {
    const { portal } = setup();
    const big = JSON.stringify({ email: 'ada@example.org', padding: 'x'.repeat(MAX_BODY_BYTES) });
    const declared = await send(portal, post('/portal/keys', big));
    expect(declared.status).toBe(413);
    expect(declared.json.error).toBe(PORTAL_MESSAGES.tooLarge);
    const streamed = new Request(`${ORIGIN}/portal/keys/rotate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 10; i++) controller.enqueue(new TextEncoder().encode('x'.repeat(1000)));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect((await send(portal, streamed)).status).toBe(413);
  });

  it('accepts a body of exactly the limit', async () => {
    const { portal } = setup();
    const head = '{"email":"ada@example.org","p":"';
    const body = `${head}${'x'.repeat(MAX_BODY_BYTES - head.length - 2)}"}`;
    expect(body.length).toBe(MAX_BODY_BYTES);
    expect((await send(portal, post('/portal/keys', body))).status).toBe(201);
  });

  it('refuses any Content-Type but JSON with a 415', async () => {
    const { portal } = setup();
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const out = await send(portal, post('/portal/keys', { email: 'ada@example.org' }, { 'content-type': type }));
      expect(out.status, type).toBe(415);
      expect(out.json.error).toBe(PORTAL_MESSAGES.unsupportedType);
    }
    const bare = new Request(`${ORIGIN}/portal/keys`, { method: 'POST', body: new Uint8Array(new TextEncoder().encode('{"email":"ada@example.org"}')) });
    expect((await send(portal, bare)).status).toBe(415);
    const charset = await send(portal, post('/portal/keys', { email: 'ada@example.org' }, { 'content-type': 'Application/JSON; charset=utf-8' }));
    expect(charset.status).toBe(201);
  });

  it('answers other methods with a 405 and an Allow header', async () => {
    const { portal } = setup();
    for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH']) {
      const response = await portal.handle(new Request(`${ORIGIN}/portal/keys/rotate`, { method }), '203.0.113.7');
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST, OPTIONS');
      if (method !== 'HEAD') expect((await response.json()).error).toBe(PORTAL_MESSAGES.methodNotAllowed);
    }
  });

  it('answers a preflight without granting other origins anything', async () => {
    const { portal } = setup();
    const response = await portal.handle(
      new Request(`${ORIGIN}/portal/keys`, {
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      }),
      '203.0.113.7',
    );
    expect(response.status).toBe(204);
    expect(response.headers.get('allow')).toBe('POST, OPTIONS');
    for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers']) {
      expect(response.headers.get(name)).toBeNull();
    }
  });

  it('never sends a CORS grant on its answers', async () => {
    const { portal } = setup();
    const ok = await send(portal, post('/portal/keys', { email: 'ada@example.org' }));
    const bad = await send(portal, post('/portal/keys', 'nope'));
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
    expect(bad.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers an unknown path under /portal/keys with a JSON 404, and leaves other paths to the caller', async () => {
    const { portal } = setup();
    const out = await send(portal, post('/portal/keys/list', {}));
    expect(out.status).toBe(404);
    expect(out.json).toEqual({ error: PORTAL_MESSAGES.notFound });
    const other = await portal.reply({ method: 'POST', url: '/portal', header: () => null, clientIp: 'x', body: async () => null });
    expect(other).toBeNull();
    const trailing = await send(portal, post('/portal/keys/', { email: 'ada@example.org' }));
    expect(trailing.status).toBe(201);
  });

  it('answers a 500 with an error field when key storage fails, and logs no key or address', async () => {
    const broken: KeyBackend = {
      get: async () => {
        throw new Error('store down');
      },
      put: async () => {
        throw new Error('store down');
      },
      all: async () => {
        throw new Error('store down');
      },
    };
    const { portal, lines } = setup({ keys: new Keys(broken) });
    const out = await send(portal, post('/portal/keys', { email: 'ada@example.org' }));
    expect(out.status).toBe(500);
    expect(out.json.error).toBe(PORTAL_MESSAGES.unavailable);
    const rotate = await send(portal, post('/portal/keys/rotate', { apiKey: 'faa_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }));
    expect(rotate.status).toBe(500);
    expect(lines.join('\n')).not.toMatch(/ada@example\.org|faa_A/);
  });

  it('logs method, path and status but never the key or the address', async () => {
    const { portal, lines } = setup();
    const key = (await send(portal, post('/portal/keys', { email: 'ada@example.org' }))).json.apiKey;
    await send(portal, post('/portal/keys/rotate', { apiKey: key }));
    expect(lines).toEqual(['POST /portal/keys 201', 'POST /portal/keys/rotate 200']);
  });
});

describe('the per-address limit on new keys', () => {
  it('answers the sixth new key in a minute from one address with a 429 and Retry-After', async () => {
    let t = 1_000_000;
    const { portal } = setup({ now: () => t });
    for (let i = 0; i < 5; i++) expect((await send(portal, post('/portal/keys', { email: `u${i}@example.org` }))).status).toBe(201);
    t += 20_000;
    const out = await send(portal, post('/portal/keys', { email: 'u5@example.org' }));
    expect(out.status).toBe(429);
    expect(out.headers.get('retry-after')).toBe('40');
    expect(out.json).toMatchObject({ error: PORTAL_MESSAGES.tooMany, retryAfter: 40 });
  });

  it('counts each client address on its own', async () => {
    const { portal } = setup({ issueLimitPerMinute: 1 });
    expect((await send(portal, post('/portal/keys', { email: 'a@example.org' }), '198.51.100.1')).status).toBe(201);
    expect((await send(portal, post('/portal/keys', { email: 'b@example.org' }), '198.51.100.1')).status).toBe(429);
    expect((await send(portal, post('/portal/keys', { email: 'b@example.org' }), '198.51.100.2')).status).toBe(201);
  });

  it('lets the address ask again once the minute is over', async () => {
    let t = 0;
    const { portal } = setup({ issueLimitPerMinute: 1, now: () => t });
    await send(portal, post('/portal/keys', { email: 'a@example.org' }));
    expect((await send(portal, post('/portal/keys', { email: 'b@example.org' }))).status).toBe(429);
    t += 60_000;
    expect((await send(portal, post('/portal/keys', { email: 'b@example.org' }))).status).toBe(201);
  });

  it('does not count malformed requests, which never reach the store', async () => {
    const { portal } = setup({ issueLimitPerMinute: 1 });
    for (const body of ['nope', '{"email": "nope"}', '{}']) expect((await send(portal, post('/portal/keys', body))).status).toBe(400);
    expect((await send(portal, post('/portal/keys', { email: 'a@example.org' }))).status).toBe(201);
  });

  it('counts asking again for a taken address, so addresses cannot be probed faster than the limit', async () => {
    const { portal } = setup({ issueLimitPerMinute: 2 });
    await send(portal, post('/portal/keys', { email: 'a@example.org' }));
    expect((await send(portal, post('/portal/keys', { email: 'a@example.org' }))).status).toBe(409);
    expect((await send(portal, post('/portal/keys', { email: 'a@example.org' }))).status).toBe(429);
  });

  it('counts rotations, which also hand out a key, but not revocations', async () => {
    const { portal } = setup({ issueLimitPerMinute: 2 });
    const key = (await send(portal, post('/portal/keys', { email: 'a@example.org' }))).json.apiKey;
    const next = (await send(portal, post('/portal/keys/rotate', { apiKey: key }))).json.apiKey;
    expect((await send(portal, post('/portal/keys/rotate', { apiKey: next }))).status).toBe(429);
    expect((await send(portal, post('/portal/keys/revoke', { apiKey: next }))).status).toBe(200);
  });
});

describe('the portal on the Node server', () => {
  let dir: string;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'faa-portal-'));
    ({ server } = createNodeServer({ dist: path.join(dir, 'dist'), keysFile: path.join(dir, 'keys.json'), portal: (keys) => nodePortal(keys) }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  const postJson = (p: string, body: string) => fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('issues, rotates and revokes through the same key file the API reads', async () => {
    const issued = await postJson('/portal/keys', JSON.stringify({ email: 'node@example.org' }));
    expect(issued.status).toBe(201);
    const { apiKey } = await issued.json();
    const rotated = await postJson('/portal/keys/rotate', JSON.stringify({ apiKey }));
    expect(rotated.status).toBe(200);
    const next = (await rotated.json()).apiKey;
    expect((await postJson('/portal/keys/revoke', JSON.stringify({ apiKey: next }))).status).toBe(200);
    expect((await postJson('/portal/keys/revoke', JSON.stringify({ apiKey: next }))).status).toBe(403);
  });

  it('refuses a large body sent without a length with a 413 and stays up', async () => {
    const chunks = Array.from({ length: 64 }, () => 'x'.repeat(16 * 1024));
    const out = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${base}/portal/keys`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      const write = (i: number): void => {
        if (i === chunks.length) return void req.end();
        if (req.destroyed) return;
        req.write(chunks[i], () => write(i + 1));
      };
      write(0);
    }).catch((error: Error) => ({ status: -1, body: error.message }));
    // The client may see the reply or a reset, depending on timing; the server must answer the next request either way.
    if (out.status !== -1) expect(out).toMatchObject({ status: 413 });
    expect((await postJson('/portal/keys', JSON.stringify({ email: 'after@example.org' }))).status).toBe(201);
  });

  it('leaves the API and its 405 for POST to other paths alone', async () => {
    const response = await postJson('/archive/apikey=x', '{}');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});

describe('the portal page files', () => {
  it('are portal.html, portal.css and portal.js, linked by absolute paths so /portal and /portal/ both work', () => {
    const files = portalFiles();
    expect([...files.keys()]).toEqual(['portal.html', 'portal.css', 'portal.js']);
    const html = new TextDecoder().decode(files.get('portal.html'));
    expect(html).toContain('href="/portal.css"');
    expect(html).toContain('src="/portal.js"');
    expect(html).toMatch(/aria-live="polite"/);
    for (const id of ['get-email', 'rotate-key', 'revoke-key']) expect(html).toContain(`<label for="${id}">`);
  });
});
