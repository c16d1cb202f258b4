/**
 * The Node side's one logger: JSON lines in pino's format
 * (`{"level":"info","time":"…","msg":"GET /archive/year=2026/apikey=faa_AbCdEfGh... 200 1ms"}`),
 * written through sonic-boom, pino's own buffered destination. A request only
 * pushes its line onto a list; every `flushMs` (or sooner, once `flushBytes`
 * of lines wait) they are formatted, redacted (here, where they are written,
 * so no code path can forget it: no key, sign-in token or session reaches a
 * log) and handed over in one write. The access log never makes a request
 * wait on stdout or a file, and costs one write per batch, not per line.
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
  /** Writes out what is buffered. */
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
  // A flat copy: slices would keep the whole original alive while the line waits for its batch.
  return JSON.parse(JSON.stringify(`${line.slice(0, head)} ...[${tail - head} characters left out]... ${line.slice(tail)}`));
}

/** ISO time of a millisecond, computed once for all the lines of that millisecond. */
function isoClock(): (ms: number) => string {
  let last = -1;
  let text = '';
  return (ms) => (ms === last ? text : ((last = ms), (text = new Date(ms).toISOString())));
}

export function createLog(options: LogOptions = {}): Log {
  const { destination = 1, maxBufferedBytes = 16 * 1024 * 1024, flushMs = 50, flushBytes = 64 * 1024 } = options;
  const boom =
    typeof destination === 'object'
      ? null
      : new SonicBoom({ dest: destination, sync: false, mkdir: typeof destination === 'string', maxLength: maxBufferedBytes, contentMode: 'buffer' });
  // In buffer mode sonic-boom takes Buffers, which its types (strings only) do not say.
  const out = (boom ?? destination) as { write(bytes: Buffer): unknown };
  let dropped = 0;
  boom?.on('drop', (bytes: Buffer) => {
    for (let i = bytes.indexOf(0x0a); i !== -1; i = bytes.indexOf(0x0a, i + 1)) dropped++;
  });
  const iso = isoClock();
  let pending: (string | number)[] = []; // time, level, line, time, level, line, ...
  let waiting = 0; // characters of the lines in `pending`
  let timer: ReturnType<typeof setTimeout> | null = null;
  let soon = false; // a write is set for the end of this event-loop turn

  function write(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    soon = false;
    waiting = 0;
    if (pending.length === 0) return;
    let text = '';
    // Only the message can hold a secret (level and time are ours): it is redacted before it is JSON-encoded.
    for (let i = 0; i < pending.length; i += 3) {
      text += `{"level":"${pending[i + 1]}","time":"${iso(pending[i] as number)}","msg":${JSON.stringify(redactLine(pending[i + 2] as string))}}\n`;
    }
    pending = [];
    if (dropped > 0) text += `{"level":"error","time":"${iso(Date.now())}","msg":"log: ${dropped} lines dropped: the destination was too slow"}\n`;
    dropped = 0;
    out.write(Buffer.from(text)); // the batch as one string, encoded to UTF-8 in one call
  }

  function push(level: 'info' | 'error', whole: string, time = Date.now()): void {
    const line = shorten(whole); // a huge line is not kept in memory while it waits
    pending.push(time, level, line);
    waiting += line.length;
    if (waiting >= flushBytes && !soon) {
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
    return new Promise<void>((resolve) => (boom ? boom.flush(() => resolve()) : resolve()));
  };
  return log;
}
