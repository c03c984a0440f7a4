// A tiny SMTP server on 127.0.0.1 (RFC 5321's happy path): the mail relay outside Gantry, for
// the tests that check what is delivered (kernel-mail, the brand in every mail, status subscriptions).
import { createServer, type Server, type Socket } from 'node:net';

export interface Received {
  from: string;
  to: string[];
  data: string;
}

/** A tiny SMTP server (RFC 5321 happy path) that can be told to refuse recipients. */
export function fakeSmtp() {
  const received: Received[] = [];
  const state = { refuse: false };
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.setEncoding('utf8');
    let buffer = '';
    let inData = false;
    let current: Received = { from: '', to: [], data: '' };
    const say = (line: string) => socket.write(`${line}\r\n`);
    say('220 fake.smtp ESMTP ready');
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end === -1) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          received.push(current);
          current = { from: '', to: [], data: '' };
          say('250 2.0.0 queued');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol === -1) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') say('250 fake.smtp');
        else if (verb === 'MAIL') {
          current.from = line;
          say('250 2.1.0 ok');
        } else if (verb === 'RCPT') {
          if (state.refuse) say('451 4.3.0 try again later');
          else {
            current.to.push(line);
            say('250 2.1.5 ok');
          }
        } else if (verb === 'DATA') {
          inData = true;
          say('354 go ahead');
        } else if (verb === 'RSET' || verb === 'NOOP') say('250 ok');
        else if (verb === 'QUIT') {
          say('221 bye');
          socket.end();
        } else say('502 not implemented');
      }
    });
  });
  return {
    received,
    state,
    listen: () =>
      new Promise<number>((resolve) =>
        server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A header of a received mail, its folded lines joined (RFC 5322 2.2.3). */
export function headerOf(mail: Received, name: string): string | undefined {
  const head = mail.data.split('\r\n\r\n')[0].replace(/\r\n[ \t]+/g, ' ');
  return head
    .split('\r\n')
    .find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))
    ?.slice(name.length + 1)
    .trim();
}

/** The text of a received single-part mail, its transfer encoding (quoted-printable, base64) undone. */
export function textOf(mail: Received): string {
  const body = mail.data.slice(mail.data.indexOf('\r\n\r\n') + 4).replace(/^\.\./gm, '.');
  const encoding = (headerOf(mail, 'Content-Transfer-Encoding') ?? '7bit').toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding !== 'quoted-printable') return body.replace(/\r\n/g, '\n');
  const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => `%${hex}`);
  return decodeURIComponent(bytes.replace(/%(?![0-9A-F]{2})/g, '%25')).replace(/\r\n/g, '\n');
}
