/**
 * The Node side's one logger: pino, writing asynchronously through a
 * buffered destination (sonic-boom), so a request never waits on stdout or a
 * file. Every line passes `redactLine` in pino's `streamWrite` hook, where it
 * is written, so no key, sign-in token or session reaches a log whatever code
 * path produced the line. Lines are pino's JSON:
 * `{"level":"info","time":"…","msg":"GET /archive/year=2026/apikey=faa_AbCdEfGh… 200 1ms"}`.
 */
import pino, { type DestinationStream } from 'pino';
import { redactLine } from '../redact.ts';

export interface Log {
  /** One line at info level (the access log, the portal's log). */
  (line: string): void;
  error(line: string): void;
  /** Writes out what is buffered. */
  flush(): Promise<void>;
}

export interface LogOptions {
  /** A file descriptor (default 1, stdout), a file path, or a stream (tests). */
  destination?: number | string | DestinationStream;
}

export function createLog(options: LogOptions = {}): Log {
  const { destination = 1 } = options;
  const stream =
    typeof destination === 'number' || typeof destination === 'string'
      ? pino.destination({ dest: destination, sync: false, mkdir: typeof destination === 'string' })
      : destination;
  const logger = pino(
    {
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      hooks: { streamWrite: redactLine },
    },
    stream,
  );
  const log = ((line: string) => logger.info(line)) as Log;
  log.error = (line) => logger.error(line);
  log.flush = () => new Promise<void>((resolve) => logger.flush(() => resolve()));
  return log;
}
