/**
 * The command line of every npm script, read one way: `--help` (or `-h`)
 * prints the command's usage on stdout and exits 0 before any work is done;
 * an unknown option, a missing value or an argument the command does not take
 * is one line on stderr naming the command, and exit 2. node:util parseArgs
 * does the parsing; this adds the two promises above, so no script starts a
 * download or a server when asked for help, and none prints a stack trace for
 * a mistyped option.
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { wholeNumberSetting } from '../src/shared/limits.ts';

/** One command's line. */
export interface CommandSpec<O extends ParseArgsOptionsConfig> {
  /** How messages name the command, as its npm script is named (`build`, `data:fetch`). */
  name: string;
  /** What --help prints: a usage line, then what the command does and its options. */
  usage: string;
  /** Its options, as parseArgs takes them; `--help` is added. */
  options: O;
  /** The most positional arguments it takes (default none). */
  positionals?: number;
}

/** The options parsed for `O`, with `help` added. */
type Values<O extends ParseArgsOptionsConfig> = ReturnType<
  typeof parseArgs<{ options: O & typeof HELP; allowPositionals: true; strict: true }>
>['values'];

/** What reading a command line gives: the parsed line, or the text to print and the exit code to stop with. */
export type CommandLine<O extends ParseArgsOptionsConfig> =
  { values: Values<O>; positionals: string[] } | { exit: 0 | 2; text: string };

const HELP = { help: { type: 'boolean', short: 'h' } } as const;

/** Reads `argv` for `spec`, without printing or exiting (tests call this). */
export function readCommandLine<O extends ParseArgsOptionsConfig>(
  spec: CommandSpec<O>,
  argv: string[],
): CommandLine<O> {
  // Help wins over every mistake on the line, so `--help` always answers.
  const options = argv.indexOf('--') === -1 ? argv : argv.slice(0, argv.indexOf('--'));
  if (options.includes('--help') || options.includes('-h')) return { exit: 0, text: spec.usage.trimEnd() };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...spec.options, ...HELP }, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs explains at length how to pass a positional that starts with '-': its first sentence is the point.
    const reason = (error as Error).message.split(/\.\s/)[0].replace(/\.$/, '');
    return { exit: 2, text: `${spec.name}: ${reason}; see --help` };
  }
  const most = spec.positionals ?? 0;
  if (parsed.positionals.length > most) {
    return { exit: 2, text: `${spec.name}: unexpected argument '${parsed.positionals[most]}'; see --help` };
  }
  return { values: parsed.values as Values<O>, positionals: parsed.positionals };
}

/**
 * Reads the process's command line for `spec`; on --help prints
 * the usage and exits 0, on a mistake one line and exit 2.
 */
export function commandLine<O extends ParseArgsOptionsConfig>(
  spec: CommandSpec<O>,
  argv = process.argv.slice(2),
): { values: Values<O>; positionals: string[] } {
  const line = readCommandLine(spec, argv);
  if ('values' in line) return line;
  if (line.exit === 0) console.log(line.text);
  else console.error(line.text);
  process.exit(line.exit);
}

/**
 * Stops a command with one line on stderr, no stack; typed where
 * it is declared, so TypeScript knows nothing runs after it.
 */
export type Refuse = (line: string, code?: number) => never;

/**
 * A command's refusal: one line on stderr naming it, then exit (1
 * unless told): for what the user can fix (a setting, a file, a port).
 */
export function refuser(name: string): Refuse {
  return (line, code = 1) => {
    console.error(`${name}: ${line}`);
    process.exit(code);
  };
}

/** A whole-number setting from the environment (src/shared/limits.ts), or the command refused with the reason. */
export function settingOrRefuse(refuse: Refuse, name: string, fallback: number, min: number, max?: number): number {
  try {
    return wholeNumberSetting(name, process.env[name], fallback, min, max);
  } catch (error) {
    return refuse((error as Error).message);
  }
}
