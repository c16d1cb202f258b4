/**
 * The README and the guides in docs/, as a newcomer reads them: the README
 * short, starting with the two commands; every command in them checked as
 * written (npm scripts that exist, nothing run with the system's bare node,
 * no variable set before `&&` where the command after it needs it); every
 * file and guide they name there; nothing outside the repository named.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.ts';

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const GUIDES = readdirSync(path.join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const DOCS: [string, string][] = [
  ['README.md', README],
  ...GUIDES.map((f): [string, string] => [f, readFileSync(path.join(ROOT, f), 'utf8')]),
];
const SCRIPTS = Object.keys(
  (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
);

/**
 * The shell commands of a Markdown text: the lines of its indented
 * and fenced blocks that start with a command or a variable for one.
 */
function commands(markdown: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    const code = fenced ? line : /^ {4}/.test(line) ? line.slice(4) : null;
    if (code !== null && /^(?:[A-Z_]+=\S*\s+)*(?:npm|npx|node|curl|sqlite3)\b/.test(code))
      lines.push(code.replace(/\s+#.*$/, '').trim());
  }
  return lines;
}

/** What is wrong with a command line as written, or null. */
export function mistakeIn(line: string): string | null {
  // `VAR=x npm ci && npm start`: the variable reaches the first command only.
  if (/^(?:[A-Z_]+=\S*\s+)+[^&]*&&/.test(line)) return 'a variable set before && reaches only the command before it';
  const bare = /(?:^|&&\s*|\s)node\s+(\S+\.ts)\b/.exec(line);
  if (bare) return `runs ${bare[1]} with the system's node (use its npm script, so the project's Node 24 runs it)`;
  for (const [, script] of line.matchAll(/\bnpm run (?:--silent )?([\w:-]+)/g))
    if (!SCRIPTS.includes(script)) return `npm run ${script}: no such script`;
  return null;
}

describe('the README and the guides', () => {
  it('start with the two commands, install and start, then install and test, and stay short', () => {
    expect(commands(README).slice(0, 2)).toEqual(['npm ci && npm start', 'npm ci && npm test']);
    expect(README.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('catch the mistakes a command can be written with', () => {
    expect(mistakeIn('ARCHIVE_SOURCE=/path/to/oscars.csv npm ci && npm start')).toMatch(/before &&/);
    expect(mistakeIn('node bench/worker-cpu.ts dist')).toMatch(/system's node/);
    expect(mistakeIn('npm run frobnicate')).toMatch(/no such script/);
    expect(mistakeIn('ARCHIVE_SOURCE=/path/to/oscars.csv npm start')).toBeNull();
    expect(mistakeIn('npm ci && npm test')).toBeNull();
  });

  it.each(DOCS)('%s: every command runs as written', (_, text) => {
    const wrong = commands(text).flatMap((line) => {
      const mistake = mistakeIn(line);
      return mistake ? [`${line}: ${mistake}`] : [];
    });
    expect(wrong).toEqual([]);
  });

  it.each(DOCS)('%s: names only files the repository has, and nothing outside it', (_, text) => {
    expect(text).not.toContain('../shared');
    const named = [
      ...text.matchAll(/(?<![\w/.-])((?:docs|src|build|cli|adapters|bench|migrations|netlify|test)\/[\w./-]*\w)/g),
    ].map(([, p]) => p);
    expect(named.filter((p) => !existsSync(path.join(ROOT, p)))).toEqual([]);
  });

  it.each(DOCS)(
    '%s: leaves what the build measures (its file count, its size) to the build, not written by hand',
    (_, text) => {
      // Such figures went stale as the archive grew (`dist/` "about 1,900" files
      // when it held 2,631): the build prints them, and tests hold them to limits.
      const figures = [
        ...text.matchAll(
          /(?:\b(?:about|some|nearly|roughly)\s|~)\d[\d,.]*\s?(?:files|MB|GB|MiB|GiB)\b|`dist\/` (?:has|holds) (?:about )?\d/g,
        ),
      ].map(([m]) => m);
      expect(figures).toEqual([]);
    },
  );

  it('link every guide from the README', () => {
    for (const guide of GUIDES) expect(README).toContain(guide);
    expect(GUIDES.sort()).toEqual([
      'docs/caching.md',
      'docs/dataset.md',
      'docs/deploy.md',
      'docs/development.md',
      'docs/keys.md',
      'docs/rankings.md',
      'docs/records.md',
      'docs/updating.md',
    ]);
  });
});
