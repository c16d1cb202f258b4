import { describe, expect, it } from 'vitest';
import { publicFile } from '../../src/api/public-files.ts';
import { isBuildPath } from '../../src/store/refs.ts';
import { DOTS, hostilePaths, SEPARATORS, SUFFIXES } from './hostile.ts';

describe('naming a public file from a path', () => {
  it.each([
    ['/', 'index.html'],
    ['/index.html', 'index.html'],
    ['/index', 'index.html'],
    ['/openapi.json', 'openapi.json'],
    ['/portal', 'portal.html'],
    ['/portal/', 'portal/index.html'],
    ['/portal.css', 'portal.css'],
    ['/portal%2ejs', 'portal.js'],
    ['/favicon.svg', 'favicon.svg'],
  ])('takes %j as %j', (pathname, file) => {
    expect(publicFile(pathname)?.path).toBe(file);
  });

  it.each([
    '/_data/manifest.json',
    '/%5fdata/manifest.json',
    '/_data%2fmanifest.json',
    '/%2e%2e/_data/manifest.json',
    '/%252e%252e/_data/manifest.json',
    '/%252e%252e/_data/manifest.json%253f.json',
    '/%252e%252e/_data/manifest.json%3f.json',
    '/x/%2e%2e/index.html',
    '/.env',
    '/package.json',
    '/index.html%00.json',
    '/index.html%3f.json',
    '/openapi.json%23.json',
    '/..%5cindex.html',
    '/%E0%A4%A',
    `/${'a'.repeat(2000)}.html`,
  ])('names no file for %j', (pathname) => {
    expect(publicFile(pathname)).toBeNull();
  });

  it('names a file only when the path, decoded once, is one of the published names, for every hostile path the runtimes are asked', () => {
    const names = new Set([
      'index.html',
      'openapi.json',
      'portal.html',
      'portal.css',
      'portal.js',
      'favicon.svg',
      'portal/index.html',
    ]);
    for (const { path } of hostilePaths(5000)) {
      const named = publicFile(path.replace('{key}', 'k'));
      if (named) expect(names.has(named.path), path).toBe(true);
    }
  });
});

describe('what a data source accepts as a path of the build', () => {
  it.each(['_data/manifest.json', '_data/r/ab/abcdef0123456789abcd', 'index.html', 'portal/index.html', 'favicon.svg'])(
    'accepts %j',
    (p) => {
      expect(isBuildPath(p)).toBe(true);
    },
  );

  const hostile = [
    ...DOTS.flatMap((dots) => SEPARATORS.map((sep) => `${dots}${sep}_data/manifest.json`)),
    ...SUFFIXES.filter(Boolean).map((suffix) => `_data/manifest.json${suffix}`),
    '',
    '/',
    '/etc/passwd',
    '_data//manifest.json',
    './index.html',
    '.env',
    '_data/.hidden',
    'a\0b',
    'index.html?x',
    'index.html#x',
    'a b',
    `${'a'.repeat(300)}`,
  ];
  it.each(hostile)('refuses %j', (p) => {
    expect(isBuildPath(p)).toBe(false);
  });
});
