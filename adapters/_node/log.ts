/**
 * The Node side's one logger: JSON lines in pino's format
 * (`{"level":"info","time":"…","msg":"GET /archive/year=2026/apikey=faa_AbCdEfGh... 200 1ms"}`),
 * written through sonic-boom, pino's own buffered destination, on its own
 * options: a line is encoded when it is logged and handed over at once;
 * sonic-boom writes once `flushBytes` wait (`minLength`), or every `flushMs`
 * (`periodicFlush`), so no request waits on stdout and a write carries many
 * lines; beyond `maxBufferedBytes` waiting (`maxLength`) it drops a line
 * rather than hold it. It redacts nothing: the front door (src/api/handler.ts)
 * makes every line it is given with a key's id and never its text.
 *
 * What sonic-boom leaves to its user, and this file does:
 * - a line it drops is counted, and the count said in the log once a line
 *   fits again (or at `flush`);
 * - a destination that fails (stdout closed under the server: EPIPE) never
 *   stops the server, but sonic-boom would keep its bytes and try them again
 *   every `flushMs`, forever: the first failure is said once (on stderr), the
 *   lines it held are counted as dropped, it is destroyed, and every later
 *   line is dropped and counted;
 * - `flush` waits until every line handed over is written (sonic-boom's own
 *   flush answers once fewer than `minLength` bytes wait), or a deadline, so
 *   a stalled stdout never holds up a stop.
 */
import { writeSync } from 'node:fs';
import sonicBoom, { type SonicBoom as SonicBoomClass } from 'sonic-boom';
import { shorten } from '../../src/shared/redact.ts';

// sonic-boom is CommonJS exporting its class as the module itself; its types name it as an export.
const SonicBoom = sonicBoom as unknown as typeof SonicBoomClass;
export interface Log {
  /** One line at info level (the access log, the portal's log), at `time` (ms since the epoch; default now). */
  (line: string, time?: number): void;
  error(line: string): void;
  /** One line at warn level: something failed that the server carries on without (a cache purge). */
  warn(line: string): void;
  /**
   * Writes out what waits; resolves once the destination has written it all
   * (or it failed, and all it held was dropped), or after `withinMs` at the
   * latest: true when nothing is left waiting for the destination.
   */
  flush(withinMs?: number): Promise<boolean>;
  /** Lines dropped so far (a destination too slow or failed). */
  readonly dropped: number;
}

export interface LogOptions {
  /** A file descriptor (default 1, stdout) or a file path. */
  destination?: number | string;
  /**
   * Most bytes of lines waiting for a slow destination; lines beyond are
   * dropped and counted. Default 8 MiB: sonic-boom holds each line as a
   * buffer of its own, so they take about twice their bytes in memory.
   */
  maxBufferedBytes?: number;
  /** Longest a line waits before it is written, ms; default 50. */
  flushMs?: number;
  /** Bytes of waiting lines that start a write at once; default 64 KiB. */
  flushBytes?: number;
  /** Where a failed destination is reported, once; default stderr. */
  warn?: (line: string) => void;
}

/** One line on stderr, written at once; a stderr that fails too is left alone. */
function toStderr(line: string): void {
  try {
    writeSync(2, `${line}\n`);
  } catch {
    // Nowhere left to say it.
  }
}

/** ISO time of a millisecond, computed once for all the lines of that millisecond. */
function isoClock(): (ms: number) => string {
  let last = -1;
  let text = '';
  return (ms) => (ms === last ? text : ((last = ms), (text = new Date(ms).toISOString())));
}

/**
 * sonic-boom over the destination, with what it leaves to its user: which
 * lines it refused (`maxLength`), which it has not written yet, and, once the
 * destination fails, an end to it (said once) and a count of every line lost.
 */
class Destination {
  /** Lines it held when the destination failed: lost with it. */
  lost = 0;
  /** Why the destination can no longer be written to, once it failed. */
  failed: string | null = null;
  private readonly boom: SonicBoomClass;
  /** Set by sonic-boom's 'drop', which it emits inside `write`: the line just handed over was not taken. */
  private refused = false;
  /**
   * Byte lengths of the lines taken and not yet written, oldest first, and what of
   * the first is written: what is lost, and counted, should the destination fail.
   */
  private readonly unwritten: number[] = [];
  private writtenOfFirst = 0;

  constructor(target: number | string, options: Required<Omit<LogOptions, 'destination'>>) {
    const { flushBytes, flushMs, maxBufferedBytes, warn } = options;
    // sonic-boom refuses a minLength as large as its largest single
    // write (16 KiB by default): let one write take two batches.
    this.boom = new SonicBoom({
      dest: target,
      mkdir: typeof target === 'string',
      contentMode: 'buffer',
      minLength: flushBytes,
      maxWrite: 2 * flushBytes,
      maxLength: maxBufferedBytes,
      periodicFlush: flushMs,
    });
    this.boom.on('drop', () => (this.refused = true));
    this.boom.on('write', (bytes: number) => this.written(bytes));
    this.boom.on('error', (error: NodeJS.ErrnoException) => {
      if (this.failed) return;
      this.failed = error.code ?? error.message;
      const where = typeof target === 'number' ? (target === 1 ? 'stdout' : `file descriptor ${target}`) : target;
      warn(
        `log: cannot write to ${where} (${this.failed}); the server goes on, and log lines are dropped and counted from now on`,
      );
      this.lost = this.unwritten.length;
      this.unwritten.length = 0;
      this.boom.destroy(); // else it holds what it has and tries it again every flushMs, forever
    });
  }

  /**
   * Hands one line over: whether sonic-boom took it (false once the
   * destination failed, or when as many bytes as it may hold wait).
   */
  write(text: string): boolean {
    if (this.failed) return false;
    const bytes = Buffer.from(text);
    this.refused = false;
    // In buffer mode sonic-boom takes Buffers, which its types (strings only) do not say.
    this.boom.write(bytes as unknown as string);
    if (this.refused) return false;
    this.unwritten.push(bytes.length);
    return true;
  }

  private written(bytes: number): void {
    let left = this.writtenOfFirst + bytes;
    while (this.unwritten.length > 0 && this.unwritten[0] <= left) left -= this.unwritten.shift()!;
    this.writtenOfFirst = left;
  }

  /**
   * Resolves once every line taken is written, or the destination failed
   * (sonic-boom's own flush answers once fewer than minLength bytes wait).
   */
  async drained(): Promise<true> {
    while (!this.failed && this.unwritten.length > 0)
      await new Promise<void>((resolve) => this.boom.flush(() => resolve()));
    return true;
  }
}

export function createLog(options: LogOptions = {}): Log {
  const {
    destination = 1,
    maxBufferedBytes = 8 * 1024 * 1024,
    flushMs = 50,
    flushBytes = 64 * 1024,
    warn = toStderr,
  } = options;
  const out = new Destination(destination, { maxBufferedBytes, flushMs, flushBytes, warn });
  const iso = isoClock();
  /** Lines dropped (besides those the destination held when it failed), and those not yet said in the log. */
  let dropped = 0;
  let unreported = 0;

  /** Says in the log how many lines were dropped since it last did, once that line is taken. */
  function report(): void {
    if (
      unreported > 0 &&
      !out.failed &&
      out.write(
        `{"level":"error","time":"${iso(Date.now())}","msg":"log: ${unreported} lines dropped: the destination was too slow"}\n`,
      )
    )
      unreported = 0;
  }

  function push(level: 'info' | 'warn' | 'error', whole: string, time = Date.now()): void {
    report();
    // Encoded at once, here where it is written: no line (nor the request's URL in it) waits as a string.
    if (out.write(`{"level":"${level}","time":"${iso(time)}","msg":${JSON.stringify(shorten(whole))}}\n`)) return;
    dropped++;
    if (!out.failed) unreported++;
  }

  const log = ((line: string, time?: number) => push('info', line, time)) as Log;
  log.error = (line) => push('error', line);
  log.warn = (line) => push('warn', line);
  log.flush = (withinMs?: number) => {
    report();
    if (withinMs === undefined) return out.drained();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), withinMs)));
    return Promise.race([out.drained(), late]).finally(() => clearTimeout(timer));
  };
  Object.defineProperty(log, 'dropped', { get: () => dropped + out.lost });
  return log;
}
