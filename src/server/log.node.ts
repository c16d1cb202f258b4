/**
 * The Node side's one logger: JSON lines in pino's format
 * (`{"level":"info","time":"…","msg":"GET /archive/year=2026/apikey=faa_AbCdEfGh… 200 1ms"}`),
 * written through sonic-boom, pino's own buffered destination. A request only
 * pushes its line onto a list; once per event-loop turn the lines are
 * formatted, redacted (here, where they are written, so no code path can
 * forget it: no key, sign-in token or session reaches a log) and handed over
 * in one write. The access log never makes a request wait on stdout or a file.
 */
import type { Writable } from 'node:stream';
import sonicBoom, { type SonicBoom as SonicBoomClass } from 'sonic-boom';
import { redactLine } from '../redact.ts';

// sonic-boom is CommonJS exporting its class as the module itself; its types name it as an export.
const SonicBoom = sonicBoom as unknown as typeof SonicBoomClass;
export interface Log {
  /** One line at info level (the access log, the portal's log). */
  (line: string): void;
  error(line: string): void;
  /** Writes out what is buffered. */
  flush(): Promise<void>;
}

export interface LogOptions {
  /** A file descriptor (default 1, stdout), a file path, or a stream (tests). */
  destination?: number | string | Writable;
  /** Most bytes held while the destination is slow; lines beyond are dropped and counted. Default 16 MiB. */
  maxBufferedBytes?: number;
}

/** ISO time of a millisecond, computed once for all the lines of that millisecond. */
function isoClock(): (ms: number) => string {
  let last = -1;
  let text = '';
  return (ms) => (ms === last ? text : ((last = ms), (text = new Date(ms).toISOString())));
}

export function createLog(options: LogOptions = {}): Log {
  const { destination = 1, maxBufferedBytes = 16 * 1024 * 1024 } = options;
  const boom = typeof destination === 'object' ? null : new SonicBoom({ dest: destination, sync: false, mkdir: typeof destination === 'string', maxLength: maxBufferedBytes });
  const out: { write(text: string): unknown } = boom ?? (destination as Writable);
  let dropped = 0;
  boom?.on('drop', (text: string) => (dropped += text.split('\n').length - 1));
  const iso = isoClock();
  let pending: (string | number)[] = []; // time, level, line, time, level, line, ...
  let scheduled = false;

  function write(): void {
    scheduled = false;
    if (pending.length === 0) return;
    let batch = '';
    for (let i = 0; i < pending.length; i += 3) {
      batch += `${redactLine(`{"level":"${pending[i + 1]}","time":"${iso(pending[i] as number)}","msg":${JSON.stringify(pending[i + 2])}}`)}\n`;
    }
    pending = [];
    if (dropped > 0) batch += `{"level":"error","time":"${iso(Date.now())}","msg":"log: ${dropped} lines dropped: the destination was too slow"}\n`;
    dropped = 0;
    out.write(batch);
  }

  function push(level: 'info' | 'error', line: string): void {
    pending.push(Date.now(), level, line);
    if (!scheduled) {
      scheduled = true;
      setImmediate(write);
    }
  }

  const log = ((line: string) => push('info', line)) as Log;
  log.error = (line) => push('error', line);
  log.flush = () => {
    write();
    return new Promise<void>((resolve) => (boom ? boom.flush(() => resolve()) : resolve()));
  };
  return log;
}
