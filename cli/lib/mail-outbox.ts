/**
 * A local stand-in for an HTTP e-mail API (Resend's `POST /emails` shape),
 * for npm run dev:cloudflare: a Worker sends mail only over HTTP, so without
 * MAIL_API_URL the Worker is pointed here, and each mail it sends is printed
 * and written to a folder, as npm start's outbox does. Listens on 127.0.0.1
 * only and takes only requests with its own random Bearer token.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { nodeMailer } from '../../adapters/_node/mail.ts';

const MAX_BODY = 64 * 1024;

export async function startMailOutbox(
  folder: string,
): Promise<{ url: string; token: string; describe: string; close(): void }> {
  const token = randomBytes(24).toString('base64url');
  const outbox = nodeMailer({}, folder)!;
  const server = http.createServer(async (req, res) => {
    const answer = (status: number, body: object) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'POST' || req.headers.authorization !== `Bearer ${token}`)
      return answer(401, { message: 'unauthorized' });
    let text = '';
    for await (const chunk of req) if ((text += chunk).length > MAX_BODY) return answer(413, { message: 'too large' });
    try {
      const mail = JSON.parse(text) as { to: string | string[]; subject: string; text: string; html?: string };
      await outbox.send({ to: [mail.to].flat().join(', '), subject: mail.subject, text: mail.text, html: mail.html });
      answer(200, { id: randomBytes(8).toString('hex') });
    } catch (error) {
      answer(422, { message: (error as Error).message });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/emails`;
  return { url, token, describe: outbox.describe, close: () => server.close() };
}
