// An upload answered before its body is read (a stale token, a field before the token, a file over
// the bound, a wrong extension, no session) over one raw kept-alive connection, as a client that
// sends its whole body before it reads the answer (Python's http.client, many API clients): the
// body is read to its end, the answer arrives, and the next request on the same connection is
// answered. Before, a stale token or a field before it left the body unread under an answer that
// said `Connection: keep-alive`, and the connection was reset 6 s later under the client.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createOrganization } from '../../../src/domain/organizations.js';
import { addUserToOrganization } from '../../../src/domain/users.js';
import { startTestService, type TestService } from '../../helpers/service.js';
import { Client } from '../../helpers/web-client.js';

const BOUNDARY = 'SalesMetricsTestBoundary';
/** 16 MiB of orders: far more than the socket buffers hold, so that an unread body stops the send. */
const FILE_BYTES = 16 * 1024 ** 2;

interface Exchange {
  /** The first answer's status line and its Connection header. */
  readonly status: number;
  readonly connection: string;
  readonly page: string;
  /** Whether the whole body went out, or the error that stopped it. */
  readonly sent: true | string;
  /** The status of a GET /healthz sent afterwards on the same connection, or what happened. */
  readonly next: number | string;
}

/** One answer (headers and Content-Length body) from the text received so far, if complete. */
function answerIn(text: string): { status: number; headers: string; body: string; rest: string } | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const headers = text.slice(0, end);
  const length = Number(/^content-length: *(\d+)/im.exec(headers)?.[1] ?? 0);
  if (text.length < end + 4 + length) return undefined;
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1] ?? 0);
  return { status, headers, body: text.slice(end + 4, end + 4 + length), rest: text.slice(end + 4 + length) };
}

/** Posts a multipart form with `fields` then a file, the whole body first, then reads the answer. */
async function rawUpload(
  baseUrl: string,
  fields: readonly (readonly [string, string])[],
  options: { cookie?: string; fileName?: string } = {},
): Promise<Exchange> {
  const { port } = new URL(baseUrl);
  const head = Buffer.from(
    fields
      .map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      .join('') +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${options.fileName ?? 'orders.ndjson'}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const line = Buffer.from(
    '{"store":"https://shop.example","id":"1","created_at":"2026-03-01T10:00:00Z","items":1,"total":"1"}\n',
  );
  const file = Buffer.alloc(FILE_BYTES, line.toString());
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const socket = net.connect(Number(port), '127.0.0.1');
  let received = '';
  let ended = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('end', () => (ended ||= 'closed by the server'));
  socket.on('error', (e: NodeJS.ErrnoException) => (ended ||= `error ${e.code ?? e.message}`));
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(
    `POST /settings/stores/import HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: ${baseUrl}\r\n` +
      (options.cookie ? `Cookie: ${options.cookie}\r\n` : '') +
      `Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\n` +
      `Content-Length: ${head.length + file.length + tail.length}\r\n\r\n`,
  );
  let sent: true | string = true;
  for (const chunk of [head, file, tail]) {
    for (let at = 0; at < chunk.length; at += 64 * 1024) {
      if (ended) break;
      if (!socket.write(chunk.subarray(at, at + 64 * 1024)))
        await new Promise((resolve) => {
          socket.once('drain', resolve);
          socket.once('close', resolve);
        });
    }
  }
  if (ended) sent = ended;
  const wait = async (done: () => boolean) => {
    for (let i = 0; i < 1500 && !done() && !ended; i++) await new Promise((r) => setTimeout(r, 20));
  };
  await wait(() => answerIn(received) !== undefined);
  const first = answerIn(received);
  let next: number | string = ended || 'no answer';
  if (first && !ended) {
    received = first.rest;
    socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await wait(() => answerIn(received) !== undefined);
    next = answerIn(received)?.status ?? (ended || 'no answer');
  }
  socket.destroy();
  return {
    status: first?.status ?? 0,
    connection: /^connection: *(.*)$/im.exec(first?.headers ?? '')?.[1]?.trim() ?? '',
    page: Buffer.from(first?.body ?? '', 'latin1').toString('utf8'),
    sent,
    next,
  };
}

describe('uploads answered early keep their connection usable', () => {
  let service: TestService;
  let client: Client;
  before(async () => {
    service = await startTestService({ IMPORT_MAX_BYTES: String(1024 ** 2) });
    const org = await createOrganization(service.db, { name: 'Early answers' });
    await addUserToOrganization(service.db, org.id, 'early@example.com', 'long enough password');
    client = new Client(service.baseUrl);
    assert.equal((await client.login('early@example.com')).status, 303);
  });
  after(async () => {
    await service.cleanup();
  });

  const cases: readonly {
    name: string;
    fields: (token: string) => (readonly [string, string])[];
    fileName?: string;
    signedOut?: boolean;
    status: number;
    says: RegExp;
  }[] = [
    {
      name: 'a stale token',
      fields: () => [['_csrf', 'stale-token']],
      status: 403,
      says: /Formulaire expiré ou invalide/,
    },
    {
      name: 'a field before the token',
      fields: (token) => [
        ['skip_invalid', '1'],
        ['_csrf', token],
      ],
      status: 403,
      says: /Formulaire expiré ou invalide/,
    },
    {
      name: 'a file over IMPORT_MAX_BYTES',
      fields: (token) => [['_csrf', token]],
      status: 413,
      says: /Fichier trop volumineux : 1 Mio au plus/,
    },
    {
      name: 'a wrong extension',
      fields: (token) => [['_csrf', token]],
      fileName: 'orders.txt',
      status: 400,
      says: /extension \.ndjson, \.jsonl ou \.csv attendue/,
    },
    { name: 'no session', fields: (token) => [['_csrf', token]], signedOut: true, status: 303, says: /^$/ },
  ];
  for (const c of cases) {
    test(`${c.name}: the 16 MiB body is read, the French answer arrives, the next request on the connection is answered`, async () => {
      const token = await client.token('/settings/stores');
      const exchange = await rawUpload(
        service.baseUrl,
        c.fields(token),
        c.signedOut ? { fileName: c.fileName } : { cookie: client.cookieHeader, fileName: c.fileName },
      );
      assert.equal(exchange.sent, true, 'the whole body went out');
      assert.equal(exchange.status, c.status, exchange.page.slice(0, 500));
      assert.match(exchange.page, c.says);
      assert.equal(exchange.connection, 'keep-alive');
      assert.equal(exchange.next, 200, 'an answer that says keep-alive keeps the connection');
    });
  }
});
