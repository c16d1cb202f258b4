import { describe, expect, it } from 'vitest';
import { readCommandLine } from '../cli/command-line.ts';

const spec = {
  name: 'demo',
  usage: 'usage: npm run demo -- [--source PATH] [--force]\n\nDoes a demo.\n',
  options: { source: { type: 'string' }, force: { type: 'boolean', default: false } },
  positionals: 1,
} as const;

describe('a command line', () => {
  it('answers --help and -h with the usage and exit 0, whatever else is on the line', () => {
    for (const argv of [['--help'], ['-h'], ['--source', 'x', '--help'], ['--help', '--unknown']]) {
      expect(readCommandLine(spec, argv)).toEqual({ exit: 0, text: spec.usage.trimEnd() });
    }
  });

  it('refuses an unknown option in one line that names the command and the option, exit 2', () => {
    const line = readCommandLine(spec, ['--sauce', 'x']);
    expect(line).toEqual({ exit: 2, text: expect.stringMatching(/^demo: Unknown option '--sauce'; see --help$/) });
  });

  it('refuses an option without its value and a second positional argument, each in one line', () => {
    expect(readCommandLine(spec, ['--source'])).toMatchObject({ exit: 2, text: expect.stringMatching(/^demo: .*--source.*; see --help$/) });
    expect(readCommandLine(spec, ['a', 'b'])).toEqual({ exit: 2, text: "demo: unexpected argument 'b'; see --help" });
    expect(readCommandLine({ ...spec, positionals: 0 }, ['a'])).toEqual({ exit: 2, text: "demo: unexpected argument 'a'; see --help" });
  });

  it('gives the values and positionals of a good line, defaults filled in', () => {
    expect(readCommandLine(spec, ['--source', 'in.csv', 'extra'])).toEqual({ values: { source: 'in.csv', force: false }, positionals: ['extra'] });
  });
});
