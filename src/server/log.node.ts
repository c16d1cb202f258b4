/**
 * The Node side's one logger: JSON lines in pino's format
 * (`{"level":"info","time":"…","msg":"GET /archive/year=2026/apikey=faa_AbCdEfGh... 200 1ms"}`),
 * written through sonic-boom, pino's own buffered destination. Like pino, it
 * formats a line when it is logged: redacted (here, where lines are written,
 * so no code path can forget it: no key, sign-in token or session reaches a
 * log), JSON-encoded and added to a batch of UTF-8 bytes. Every `flushMs` (or
 * sooner, once `flushBytes` wait) the batch is handed over in one write. The
 * access log never makes a request wait on stdout or a file, costs one write
 * per batch, not per line, and keeps no line (nor the URL in it) alive as a
 * string until then.
 */
import type { Writable } from 'node:stream';
import sonicBoom, { type SonicBoom as SonicBoomClass } from 'sonic-boom';
import { isAtomChar, redactLine } from '../redact.ts';

// sonic-boom is CommonJS exporting its class as the module itself; its types name it as an export.
const SonicBoom = sonicBoom as unknown as typeof SonicBoomClass;
export interface Log {
  /** One line at info level (the access log, the portal's log), at `time` (ms since the epoch; default now). */
  (line: string, time?: number): void;
  error(line: string): void;
  /** Writes out what is batched; resolves once the destination has written it all (or dropped it). */
  flush(): Promise<void>;
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
}

/** Longest line kept whole; a longer one (a URL with a 15 KB "key", say) keeps its start and end. */
export const MAX_LINE = 2048;

/**
 * A line cut to about MAX_LINE characters, only between the atoms the
 * redactor reads (src/redact.ts), so no secret is ever split into a part it
 * would no longer recognise: the start up to the last boundary before 1.5 KiB,
 * the end from the first boundary in its last 256 characters.
 */
export function shorten(line: string): string {
  if (line.length <= MAX_LINE) return line;
  let head = MAX_LINE - 512;
  while (head > 0 && isAtomChar(line.charCodeAt(head - 1)) && isAtomChar(line.charCodeAt(head))) head--;
  let tail = line.length - 256;
  while (tail < line.length && isAtomChar(line.charCodeAt(tail - 1)) && isAtomChar(line.charCodeAt(tail))) tail++;
  return `${line.slice(0, head)} ...[${tail - head} characters left out]... ${line.slice(tail)}`;
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
 * disk), or a stream (tests).
 */
class Destination {
  /** Lines dropped and not yet reported. */
  private dropped = 0;
  private readonly boom: SonicBoomClass | null;
  private unwritten = 0;
  private waiting: (() => void)[] = [];
  private readonly target: number | string | Writable;

  constructor(target: number | string | Writable, maxBufferedBytes: number) {
    this.target = target;
    const boom =
      typeof target === 'object' ? null : new SonicBoom({ dest: target, sync: false, mkdir: typeof target === 'string', maxLength: maxBufferedBytes, contentMode: 'buffer' });
    boom?.on('write', (bytes: number) => this.written(bytes));
    boom?.on('drop', (bytes: Buffer) => {
      for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) this.dropped++;
      this.written(bytes.length);
    });
    this.boom = boom;
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
    const before = this.dropped;
    if (this.boom) this.unwritten += batch.length;
    // In buffer mode sonic-boom takes Buffers, which its types (strings only) do not say.
    (this.boom ?? (this.target as Writable)).write(batch as unknown as string);
    if (reported > 0 && this.dropped > before) this.dropped += reported - 1;
  }

  /** Resolves once every byte handed over is written or dropped. */
  drained(): Promise<void> {
    return new Promise((resolve) => (this.unwritten > 0 ? this.waiting.push(resolve) : resolve()));
  }

  private written(bytes: number): void {
    this.unwritten -= bytes;
    if (this.unwritten > 0) return;
    for (const resolve of this.waiting) resolve();
    this.waiting = [];
  }
}

export function createLog(options: LogOptions = {}): Log {
  const { destination = 1, maxBufferedBytes = 16 * 1024 * 1024, flushMs = 50, flushBytes = 64 * 1024 } = options;
  const out = new Destination(destination, maxBufferedBytes);
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
    const lost = out.takeDropped();
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

  function push(level: 'info' | 'error', whole: string, time = Date.now()): void {
    // Redacted and encoded at once, here where it is written: no line (nor the request's URL in it) waits as a string.
    // Only the message can hold a secret (level and time are ours): it is redacted before it is JSON-encoded.
    append(`{"level":"${level}","time":"${iso(time)}","msg":${JSON.stringify(redactLine(shorten(whole)))}}\n`);
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
  log.flush = () => {
    write();
    return out.drained();
  };
  return log;
}
