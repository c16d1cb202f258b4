/**
 * A loopback port free now, for a process started next that takes a port
 * number rather than 0 (wrangler dev and its inspector, varnishd, npm start).
 * Picked at random below Linux's ephemeral range (32768 and up): the process
 * binds it a moment after this probe lets go of it, and in that moment an
 * outgoing connection of any process on the machine may be given an ephemeral
 * port ("Address already in use", seen with two test suites side by side).
 */
import { createServer } from 'node:net';

export async function freeLoopbackPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const probe = createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => probe.close(resolve));
      return port;
    }
  }
}
