/**
 * The Node side's one logger: JSON lines in pino's format
 * (`{"level":"info","time":"…","msg":"GET /archive/year=2026/apikey=faa_AbCdEfGh... 200 1ms"}`),
 * written through sonic-boom, pino's own buffered destination. Like pino, it
 * formats a line when it is logged: JSON-encoded and added to a batch of
 * UTF-8 bytes. It redacts nothing: the front door (src/api/handler.ts) makes
 * every line it is given with a key's id and never its text. Every `flushMs` (or
 * sooner, once `flushBytes` wait) the batch is handed over in one write. The
 * access log never makes a request wait on stdout or a file, costs one write
 * per batch, not per line, and keeps no line (nor the URL in it) alive as a
 * string until then.
 *
 * A destination that fails (stdout closed under the server: EPIPE) never stops
 * the server: from then on lines are dropped and counted, and stderr is told
 * once. Bytes waiting for a slow destination are bounded (`maxBufferedBytes`),
 * and `flush` can be given a deadline, so a stalled stdout never holds up a stop.
 */
import { writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import sonicBoom, { type SonicBoom as SonicBoomClass } from 'sonic-boom';
import { MAX_LINE, shorten } from '../../src/shared/redact.ts';

// sonic-boom is CommonJS exporting its class as the module itself; its types name it as an export.
const SonicBoom = sonicBoom as unknown as typeof SonicBoomClass;
export interface Log {
  /** One line at info level (the access log, the portal's log), at `time` (ms since the epoch; default now). */
  (line: string, time?: number): void;
  error(line: string): void;
  /** One line at warn level: something failed that the server carries on without (a cache purge). */
  warn(line: string): void;
  /**
   * Writes out what is batched; resolves once the destination has written it
   * all (or dropped it), or after `withinMs` at the latest: true when
   * nothing is left waiting for the destination.
   */
  flush(withinMs?: number): Promise<boolean>;
  /** Lines dropped so far (a destination too slow or failed). */
  readonly dropped: number;
}

export interface LogOptions {
  /** A file descriptor (default 1, stdout), a file path, or a stream (tests). */
  destination?: number | string | Writable;
  /** Most bytes held while the destination is slow; lines beyond are dropped and counted. Default 16 MiB. */
  maxBufferedBytes?: number;
  /** Longest a line waits before it is written, ms; default 50. */
  flushMs?: number;
  /** Characters of waiting lines that trigger a write at once; default 64 Ki. */
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

/** Newlines in a batch: its lines. */
function linesIn(bytes: Buffer): number {
  let lines = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) lines++;
  return lines;
}

/** Room for any one written line: a MAX_LINE message JSON-escaped (6 characters a unit at worst) with its fields, at 3 UTF-8 bytes a character (what `append` reserves). */
const CHUNK_LINE_BYTES = MAX_LINE * 6 * 3 + 256;

/** ISO time of a millisecond, computed once for all the lines of that millisecond. */
function isoClock(): (ms: number) => string {
  let last = -1;
  let text = '';
  return (ms) => (ms === last ? text : ((last = ms), (text = new Date(ms).toISOString())));
}

/**
 * Where batches go: sonic-boom over a file or descriptor, which says which
 * bytes it dropped and which it wrote (its own flush() does not wait for the
 * disk), or a stream (tests). Once it fails, every later batch is dropped and
 * counted.
 */
class Destination {
  /** Lines dropped and not yet reported. */
  private dropped = 0;
  /** Lines dropped in all. */
  droppedInAll = 0;
  /** Why the destination can no longer be written to, once it failed. */
  failed: string | null = null;
  private readonly boom: SonicBoomClass | null;
  private unwritten = 0;
  /** The batches handed to sonic-boom and not yet written, oldest first: what is lost, and counted, should it fail. */
  private pending: { bytes: number; lines: number }[] = [];
  private waiting: (() => void)[] = [];
  private readonly target: number | string | Writable;

  private readonly warn: (line: string) => void;

  constructor(target: number | string | Writable, maxBufferedBytes: number, warn: (line: string) => void) {
    this.target = target;
    this.warn = warn;
    const boom =
      typeof target === 'object' ? null : new SonicBoom({ dest: target, sync: false, mkdir: typeof target === 'string', maxLength: maxBufferedBytes, contentMode: 'buffer' });
    boom?.on('write', (bytes: number) => this.written(bytes));
    boom?.on('drop', (bytes: Buffer) => this.drop(bytes));
    boom?.on('error', (error: NodeJS.ErrnoException) => this.fail(error));
    if (typeof target === 'object') target.on('error', (error: NodeJS.ErrnoException) => this.fail(error));
    this.boom = boom;
  }

  private drop(bytes: Buffer): void {
    const lines = linesIn(bytes);
    this.dropped += lines;
    this.droppedInAll += lines;
    this.written(bytes.length);
  }

  /** The destination failed (EPIPE, EBADF, a full disk...): said once, and nothing is handed to it again. */
  private fail(error: NodeJS.ErrnoException): void {
    if (this.failed) return;
    this.failed = error.code ?? error.message;
    const where = typeof this.target === 'number' ? (this.target === 1 ? 'stdout' : `file descriptor ${this.target}`) : typeof this.target === 'string' ? this.target : 'its stream';
    this.warn(`log: cannot write to ${where} (${this.failed}); the server goes on, and log lines are dropped and counted from now on`);
    // What sonic-boom still held is lost with it: counted as dropped (the batch it was writing whole).
    const lost = this.pending.reduce((sum, batch) => sum + batch.lines, 0);
    this.dropped += lost;
    this.droppedInAll += lost;
    this.pending = [];
    this.unwritten = 0;
    this.written(0);
  }

  /** The lines dropped since last asked, to be reported now. */
  takeDropped(): number {
    const lines = this.dropped;
    this.dropped = 0;
    return lines;
  }

  /**
   * Hands a batch over. One that carries the notice of `reported` dropped
   * lines and is itself dropped (sonic-boom drops inside write) gives those
   * back to the next notice; the notice itself is not counted.
   */
  write(batch: Buffer, reported = 0): void {
    if (this.failed) {
      this.droppedInAll += linesIn(batch) - (reported > 0 ? 1 : 0);
      return;
    }
    const before = this.dropped;
    if (this.boom) {
      this.unwritten += batch.length;
      this.pending.push({ bytes: batch.length, lines: linesIn(batch) });
    }
    // In buffer mode sonic-boom takes Buffers, which its types (strings only) do not say.
    (this.boom ?? (this.target as Writable)).write(batch as unknown as string);
    if (reported > 0 && this.dropped > before) {
      this.dropped += reported - 1;
      this.droppedInAll -= 1;
    }
  }

  /** Resolves once every byte handed over is written or dropped. */
  drained(): Promise<void> {
    return new Promise((resolve) => (this.unwritten > 0 ? this.waiting.push(resolve) : resolve()));
  }

  private written(bytes: number): void {
    this.unwritten = Math.max(0, this.unwritten - bytes);
    for (let left = bytes; left > 0 && this.pending.length > 0; ) {
      const oldest = this.pending[0];
      if (oldest.bytes > left) {
        oldest.bytes -= left;
        break;
      }
      left -= oldest.bytes;
      this.pending.shift();
    }
    if (this.unwritten > 0) return;
    for (const resolve of this.waiting) resolve();
    this.waiting = [];
  }
}

export function createLog(options: LogOptions = {}): Log {
  const { destination = 1, maxBufferedBytes = 16 * 1024 * 1024, flushMs = 50, flushBytes = 64 * 1024, warn = toStderr } = options;
  const out = new Destination(destination, maxBufferedBytes, warn);
  const iso = isoClock();
  // The batch: lines already redacted and encoded. A chunk is handed over whole and never written to again.
  const chunkBytes = flushBytes + CHUNK_LINE_BYTES;
  let chunk = Buffer.allocUnsafe(chunkBytes);
  let used = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let soon = false; // a write is set for the end of this event-loop turn

  function write(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    soon = false;
    const lost = out.failed ? 0 : out.takeDropped();
    if (lost > 0) append(`{"level":"error","time":"${iso(Date.now())}","msg":"log: ${lost} lines dropped: the destination was too slow"}\n`);
    if (used === 0) return;
    out.write(chunk.subarray(0, used), lost);
    chunk = Buffer.allocUnsafe(chunkBytes);
    used = 0;
  }

  /** Adds a line to the batch as UTF-8, handing the batch over first when the line might not fit. */
  function append(text: string): void {
    if (used + text.length * 3 > chunk.length) write(); // at most 3 bytes per UTF-16 unit
    used += chunk.write(text, used);
  }

  function push(level: 'info' | 'warn' | 'error', whole: string, time = Date.now()): void {
    // Encoded at once, here where it is written: no line (nor the request's URL in it) waits as a string.
    // Lines come free of secrets: the front door makes them with a key's id, never its text.
    append(`{"level":"${level}","time":"${iso(time)}","msg":${JSON.stringify(shorten(whole))}}\n`);
    if (used >= flushBytes && !soon) {
      soon = true;
      setImmediate(write); // after this request's reply, not before it
    } else if (!timer && !soon) {
      timer = setTimeout(write, flushMs);
      timer.unref();
    }
  }

  const log = ((line: string, time?: number) => push('info', line, time)) as Log;
  log.error = (line) => push('error', line);
  log.warn = (line) => push('warn', line);
  log.flush = (withinMs?: number) => {
    write();
    const drained = out.drained().then(() => true);
    if (withinMs === undefined) return drained;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), withinMs)));
    return Promise.race([drained, late]).finally(() => clearTimeout(timer));
  };
  Object.defineProperty(log, 'dropped', { get: () => out.droppedInAll });
  return log;
}
