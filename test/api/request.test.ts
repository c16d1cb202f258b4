import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { preferredEncoding } from '../../adapters/_node/encoding.ts';
import { matchRoute, plainPathname } from '../../src/http/request.ts';

describe('reading the path of a request', () => {
  it.each([
    ['/person/name=Meryl%20Streep/apikey=k', '/person/name=Meryl%20Streep/apikey=k'],
    ['/archive/apikey=k?x=1#y', '/archive/apikey=k'],
    ['/person/name=a/../apikey=k', null],
    ['/person/name=%2e%2e/apikey=k', '/person/name=%2e%2e/apikey=k'],
    ['/x/%2e%2e/archive', null],
    ['/person/name=Timothée', null],
    ['/a b', null],
    ['/a\\b', null],
    ['http://h/archive', null],
    ['/', '/'],
    ['//evil/archive', null],
  ])('takes %j as %j without the full parser, or leaves it to it', (url, expected) => {
    expect(plainPathname(url)).toBe(expected);
  });

  it('agrees with the WHATWG parser whenever it answers', () => {
    const chars = fc.constantFrom(..."/aZ09-._~%!$&'()*+,;=:@?#. \\é2eE".split(''));
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 40 }), (parts) => {
        const url = `/${parts.join('')}`;
        const plain = plainPathname(url);
        if (plain !== null) expect(plain).toBe(new URL(url, 'http://localhost').pathname);
        else expect(() => plainPathname(url)).not.toThrow();
      }),
      { numRuns: 5000, seed: 20260303 },
    );
  });
});

describe('matching a route', () => {
  it('splits on / before anything is decoded, so %2F stays inside a name', () => {
    const m = matchRoute('/movie/name=Face%2FOff/year=1998/apikey=k');
    expect(m).toMatchObject({
      route: { id: 'filmByNameAndYear' },
      key: 'k',
      raw: { name: 'Face%2FOff', year: '1998' },
    });
  });
  it('gives a missing key as null and an unknown shape as no route', () => {
    expect(matchRoute('/archive')).toMatchObject({ route: { id: 'allCeremonies' }, key: null });
    expect(matchRoute('/person/name=a/name=b/apikey=k')).toBeNull();
    expect(matchRoute('/')).toBe('root');
  });
});

describe('reading Accept-Encoding', () => {
  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip, deflate', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['identity', null],
    ['', null],
  ])('%j is sent as %j', (header, expected) => {
    expect(preferredEncoding(header)).toBe(expected);
  });
});
