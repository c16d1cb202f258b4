/**
 * The Chromium the browser suites drive, found rather than assumed:
 * CHROMIUM_PATH when set, else /usr/bin/chromium, else the other places a
 * Chromium or Chrome is usually installed (Linux packages, snap, a Mac's
 * /Applications, playwright's own download cache). Never downloads one. With
 * none found, launching fails with one line saying how to get one: a silent
 * skip would let CI pass without ever opening the pages.
 */
import { existsSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';

/** What the lookup reads: the environment, the platform, the home folder and the file system (fake ones in tests). */
export interface Machine {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  home: string;
  exists(file: string): boolean;
  /** The names in a folder, [] when it is not there. */
  list(dir: string): string[];
}

const realMachine: Machine = {
  env: process.env,
  platform: process.platform,
  home: os.homedir(),
  exists: existsSync,
  list: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
};

/** The one line a run without a browser fails with. */
export const NO_CHROMIUM =
  'no Chromium found for the browser tests: install one (apt-get install chromium, or Google Chrome) or set CHROMIUM_PATH=/path/to/chrome';

/** Where to look after CHROMIUM_PATH, in order. */
export function chromiumCandidates(machine: Pick<Machine, 'env' | 'platform' | 'home' | 'list'>): string[] {
  const { env, platform, home, list } = machine;
  const onPath = (env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const named = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];
  const fixed =
    platform === 'darwin'
      ? [
          '/Applications/Chromium.app/Contents/MacOS/Chromium',
          '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
          path.join(home, 'Applications/Chromium.app/Contents/MacOS/Chromium'),
          path.join(home, 'Applications/Google Chrome.app/Contents/MacOS/Google Chrome'),
        ]
      : [
          '/usr/bin/chromium',
          '/usr/bin/chromium-browser',
          '/usr/bin/google-chrome',
          '/usr/bin/google-chrome-stable',
          '/snap/bin/chromium',
          '/opt/google/chrome/chrome',
        ];
  // playwright's cache (`npx playwright install chromium`), newest revision first.
  const cache =
    env.PLAYWRIGHT_BROWSERS_PATH ||
    (platform === 'darwin' ? path.join(home, 'Library/Caches/ms-playwright') : path.join(home, '.cache/ms-playwright'));
  const revisions = list(cache)
    .filter((name) => /^chromium-\d+$/.test(name))
    .sort((a, b) => Number(b.slice(9)) - Number(a.slice(9)));
  const inside =
    platform === 'darwin'
      ? ['chrome-mac/Chromium.app/Contents/MacOS/Chromium', 'chrome-mac-arm64/Chromium.app/Contents/MacOS/Chromium']
      : ['chrome-linux64/chrome', 'chrome-linux/chrome'];
  const downloaded = revisions.flatMap((revision) => inside.map((file) => path.join(cache, revision, file)));
  return [...new Set([...fixed, ...onPath.flatMap((dir) => named.map((name) => path.join(dir, name))), ...downloaded])];
}

/** The browser to drive, or the one line saying why there is none. */
export function findChromium(machine: Machine = realMachine): { path: string } | { missing: string } {
  const given = machine.env.CHROMIUM_PATH;
  if (given)
    return machine.exists(given)
      ? { path: given }
      : { missing: `CHROMIUM_PATH is ${given}, which does not exist; ${NO_CHROMIUM}` };
  const found = chromiumCandidates(machine).find((file) => machine.exists(file));
  return found ? { path: found } : { missing: NO_CHROMIUM };
}

/** Flags for a headless run with nothing phoning home. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Launches the Chromium {@link findChromium} finds; without one, fails with its line alone (no stack to read past). */
export async function launchChromium(): Promise<Browser> {
  const found = findChromium();
  if ('missing' in found) {
    const error = new Error(found.missing);
    error.stack = found.missing;
    throw error;
  }
  return chromium.launch({ executablePath: found.path, args: ARGS });
}
