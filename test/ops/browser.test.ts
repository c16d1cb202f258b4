/**
 * Where the browser suites look for Chromium (test/helpers/browser.ts), on
 * made-up machines: CHROMIUM_PATH first, then /usr/bin/chromium, then the
 * other usual places in order; none found is one line saying how to get one.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findChromium, type Machine, NO_CHROMIUM } from '../helpers/browser.ts';

/** A machine whose file system holds only `files`. */
function machine(files: string[], env: NodeJS.ProcessEnv = {}, platform: NodeJS.Platform = 'linux'): Machine {
  const present = new Set(files);
  return {
    env,
    platform,
    home: '/home/dev',
    exists: (file) => present.has(file),
    list: (dir) => [
      ...new Set(files.filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1).split('/')[0])),
    ],
  };
}

const LINUX_ALL = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
  '/opt/google/chrome/chrome',
];

describe('finding Chromium', () => {
  it('takes CHROMIUM_PATH over everything else', () => {
    expect(findChromium(machine([...LINUX_ALL, '/opt/mine/chrome'], { CHROMIUM_PATH: '/opt/mine/chrome' }))).toEqual({
      path: '/opt/mine/chrome',
    });
  });

  it('says so when CHROMIUM_PATH names nothing, rather than quietly driving another browser', () => {
    const found = findChromium(machine(LINUX_ALL, { CHROMIUM_PATH: '/opt/gone/chrome' }));
    expect(found).toEqual({ missing: `CHROMIUM_PATH is /opt/gone/chrome, which does not exist; ${NO_CHROMIUM}` });
  });

  it('then /usr/bin/chromium, then the other usual Linux places, in order', () => {
    for (let i = 0; i < LINUX_ALL.length; i++)
      expect(findChromium(machine(LINUX_ALL.slice(i)))).toEqual({ path: LINUX_ALL[i] });
  });

  it('then a chromium or google-chrome on PATH', () => {
    const env = { PATH: ['/nix/bin', '/home/dev/bin'].join(path.delimiter) };
    expect(findChromium(machine(['/home/dev/bin/chromium', '/home/dev/bin/google-chrome'], env))).toEqual({
      path: '/home/dev/bin/chromium',
    });
    expect(findChromium(machine(['/home/dev/bin/google-chrome'], env))).toEqual({
      path: '/home/dev/bin/google-chrome',
    });
  });

  it("then playwright's cache, its newest revision", () => {
    const cache = '/home/dev/.cache/ms-playwright';
    const files = [
      `${cache}/chromium-1090/chrome-linux/chrome`,
      `${cache}/chromium-1200/chrome-linux/chrome`,
      `${cache}/chromium-980/chrome-linux/chrome`,
      `${cache}/ffmpeg-1010/ffmpeg-linux`,
    ];
    expect(findChromium(machine(files))).toEqual({ path: `${cache}/chromium-1200/chrome-linux/chrome` });
    expect(
      findChromium(
        machine(['/elsewhere/chromium-1300/chrome-linux64/chrome'], { PLAYWRIGHT_BROWSERS_PATH: '/elsewhere' }),
      ),
    ).toEqual({ path: '/elsewhere/chromium-1300/chrome-linux64/chrome' });
  });

  it("looks in a Mac's /Applications, Chromium before Chrome", () => {
    const chromium = '/Applications/Chromium.app/Contents/MacOS/Chromium';
    const chrome = '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome';
    expect(findChromium(machine([chrome, chromium], {}, 'darwin'))).toEqual({ path: chromium });
    expect(findChromium(machine([chrome, '/usr/bin/chromium'], {}, 'darwin'))).toEqual({ path: chrome });
    const cached =
      '/home/dev/Library/Caches/ms-playwright/chromium-1200/chrome-mac/Chromium.app/Contents/MacOS/Chromium';
    expect(findChromium(machine([cached], {}, 'darwin'))).toEqual({ path: cached });
  });

  it('with none anywhere, fails with one line saying how to get one', () => {
    const found = findChromium(machine(['/usr/bin/firefox'], { PATH: '/usr/bin' }));
    expect(found).toEqual({ missing: NO_CHROMIUM });
    expect(NO_CHROMIUM).not.toContain('\n');
    expect(NO_CHROMIUM).toMatch(/CHROMIUM_PATH=/);
    expect(NO_CHROMIUM).toMatch(/apt-get install chromium/);
  });
});
