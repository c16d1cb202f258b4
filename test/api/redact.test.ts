/** The log redaction table: every way a key, token or session may be written, masked; ordinary lines left alone. */
import { describe, expect, it } from 'vitest';
import { generateKey, generateSession, generateToken } from '../../src/keys/secrets.ts';
import { redactLine } from '../../src/shared/redact.ts';

const key = generateKey();
const token = generateToken();
const session = generateSession();
const id = key.slice(0, 12);
const pct = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
const PCT = (s: string) => pct(s).toUpperCase();
const twice = (s: string) => pct(s).replaceAll('%', '%25');

/** [what, line as written] */
const LEAKY: [string, string][] = [
  ['a plain apikey segment', `GET /archive/apikey=${key} 200 1ms`],
  ['the key alone', key],
  ['an upper-case label', `GET /archive/APIKEY=${key} 403 0ms`],
  ['key=', `GET /x?key=${key}`],
  ['token=', `GET /portal?token=${token}`],
  ['a fragment', `https://example.org/portal#token=${token}`],
  ['a session in a Bearer header', `authorization: Bearer ${session}`],
  ['Authorization: header form', `Authorization: ${session}`],
  ['the key fully percent-encoded', `GET /archive/apikey=${pct(key)} 403 0ms`],
  ['upper-case percent-encoding', `GET /archive/apikey=${PCT(key)}`],
  [
    'one character encoded',
    `GET /archive/apikey=${key.slice(0, 10)}%${key.charCodeAt(10).toString(16)}${key.slice(11)}`,
  ],
  ['the label encoded', `GET /archive/api%4Bey=${key}`],
  ['the = encoded', `GET /archive/apikey%3D${key}`],
  ['double-encoded', `GET /archive/apikey=${twice(key)}`],
  ['the prefix in upper case', `GET /archive/apikey=FAA_${key.slice(4)}`],
  ['the key without its prefix', `GET /archive/apikey=${key.slice(4)}`],
  ['the body alone, unlabelled', `GET /person/name=${key.slice(4)}`],
  ['a JSON escape', `{"msg":"\\u0066aa_${key.slice(4)}"}`],
  ['a key in a path segment of its own', `DELETE /portal/keys/${key} 404`],
  ['a key in a query', `POST /portal/keys/revoke?apiKey=${key} 404`],
  ['a truncated key', `GET /archive/apikey=${key.slice(0, 30)}`],
  ['a key followed by text', `GET /archive/apikey=${key}x.json`],
  ['two keys in one segment', `GET /x/${key},${generateKey()}`],
  ['a token and a session', `${token} then ${session}`],
];

describe('redactLine', () => {
  for (const [what, line] of LEAKY) {
    it(`masks ${what}`, () => {
      const out = redactLine(line);
      for (const secret of [key, token, session]) {
        const body = secret.slice(4);
        expect(out).not.toContain(body.slice(0, 24));
        expect(out.toLowerCase()).not.toContain(pct(body).slice(0, 36));
        expect(out).not.toContain(body.slice(-20));
      }
    });
  }

  it("keeps a key's id, the label and the rest of an access line", () => {
    expect(redactLine(`GET /archive/year=2026/apikey=${key} 200 3ms`)).toBe(
      `GET /archive/year=2026/apikey=${id}... 200 3ms`,
    );
    expect(redactLine(`POST /portal/session 200 4ms token=${token}`)).toBe(
      'POST /portal/session 200 4ms token=fat_...',
    );
  });

  it('is idempotent, so lines redacted by the core and again by the logger read the same', () => {
    for (const [, line] of LEAKY) expect(redactLine(redactLine(line))).toBe(redactLine(line));
  });

  it('leaves ordinary lines alone', () => {
    for (const line of [
      'GET /person/name=Meryl%20Streep/apikey=faa_AbCdEfGh... 200 1ms',
      'GET /person/name=Meryl%20Streep/apikey=faa_AbCdEfGh… 200 1ms',
      'GET /award/name=Actor%20in%20a%20Leading%20Role/year=2026 404 0ms',
      'GET /movie/name=Face%2FOff/year=1998 200 2ms',
      'data error: corrupt _data/r/ab/0123456789abcdef0123',
      'POST /portal/sign-in 202 12ms',
      'monkey=banana turkey=stuffing',
    ]) {
      expect(redactLine(line)).toBe(line);
    }
  });

  it('reads lines beyond ASCII, and lines longer than its scan buffer, the same way', () => {
    expect(redactLine('sent Bearer\u3000hunter2 ok')).toBe('sent Bearer\u3000... ok');
    expect(redactLine(`GET /person/name=Amélie token=${token} «x»`)).toBe('GET /person/name=Amélie token=fat_... «x»');
    expect(redactLine(`${'é'.repeat(5000)} apikey=hunter2 ${key}`)).toBe(`${'é'.repeat(5000)} apikey=... ${id}...`);
    expect(redactLine(`${'x/'.repeat(3000)}apikey=hunter2 ${key}`)).toBe(`${'x/'.repeat(3000)}apikey=... ${id}...`);
    for (const line of [
      'GET /person/name=Amélie Poulain/year=2002 404 0ms',
      '«abc» déjà\u00a0vu',
      `${'ü'.repeat(4100)} 200 1ms`,
    ]) {
      expect(redactLine(line)).toBe(line);
    }
  });

  it('masks any value under a secret label, even one not shaped like a key', () => {
    expect(redactLine('GET /archive/apikey=hunter2 403 0ms')).toBe('GET /archive/apikey=... 403 0ms');
    expect(redactLine('x-api-key=abc session=xyz')).toBe('x-api-key=... session=...');
  });
});
