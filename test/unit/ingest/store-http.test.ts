// The outbound client for a shop's REST API (src/ingest/connectors/store-http.ts): no address of an
// internal service is ever reached (SSRF), on any hop; TLS is verified; time and size are bounded;
// errors are French and never show credentials. Real sockets on 127.0.0.1.
//
// The test network: a connection to PUBLIC, a public ('unicast') address, lands on 127.0.0.1, as if
// the store stood on the internet. The rewrite happens after the client's own lookup has checked and
// approved PUBLIC, so the client's checks run exactly as in production.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import util from 'node:util';
import zlib from 'node:zlib';
import { once } from 'node:events';
import {
  checkStoreUrl,
  KeptConnections,
  storeGet,
  StoreHttpError,
  type StoreHttpErrorKind,
  type StoreHttpOptions,
} from '../../../src/ingest/connectors/store-http.js';

const PUBLIC = '93.184.216.34';
const SECRET = 'ck_header_secret_4d1c';
const QUERY_SECRET = 'cs_query_secret_9f2e';
const AUTH = { authorization: `Basic ${SECRET}` };
const MIB = 1024 * 1024;

const selfsigned = await import('selfsigned');
const year = 365 * 24 * 3600 * 1000;
const certificate = (names: string[], from = new Date(), to = new Date(Date.now() + year)) =>
  selfsigned.generate([{ name: 'commonName', value: names[0] ?? '' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: from,
    notAfterDate: to,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2 as const, value })) },
    ],
  });
const good = await certificate(['boutique.example.fr', 'cdn.example.fr']);
const expired = await certificate(
  ['boutique.example.fr'],
  new Date(Date.now() - 2 * year),
  new Date(Date.now() - year),
);

/** A resolver from a table of names; any other name is not found. */
function hosts(table: Record<string, string | string[]>): StoreHttpOptions['resolve'] {
  return async (hostname) => {
    const found = table[hostname];
    if (found === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return (Array.isArray(found) ? found : [found]).map((address) => ({
      address,
      family: net.isIP(address),
    }));
  };
}

const resolve = hosts({
  'boutique.example.fr': PUBLIC,
  'cdn.example.fr': PUBLIC,
  'autre.example.fr': PUBLIC,
  'interne.example.fr': '10.0.0.1',
  'rebind.example.fr': '127.0.0.1',
  'mixte.example.fr': [PUBLIC, '10.0.0.1'],
  'mappee.example.fr': '::ffff:127.0.0.1',
  'local.test': '127.0.0.1',
  'double.test': ['::1', '127.0.0.1'],
});
const publicStore: StoreHttpOptions = { allowPrivate: false, ca: good.cert, resolve };
const devStore: StoreHttpOptions = { allowPrivate: true, resolve };

const connect = net.Socket.prototype.connect;
before(() => {
  const toLoopback = (address: string) => (address === PUBLIC ? '127.0.0.1' : address);
  net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
    const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
    const options = first as { lookup?: net.LookupFunction } | undefined;
    const lookup = options?.lookup;
    if (options && lookup) {
      options.lookup = (host, lookupOptions, done) =>
        lookup(host, lookupOptions, (error, address, family) =>
          done(
            error,
            typeof address === 'string'
              ? toLoopback(address)
              : address.map((a) => ({ ...a, address: toLoopback(a.address) })),
            family,
          ),
        );
    }
    return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof connect;
});
after(() => {
  net.Socket.prototype.connect = connect;
});

interface Store {
  readonly port: number;
  readonly requests: http.IncomingMessage[];
  connections: number;
}
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A server on 127.0.0.1, closed with its connections after the test. */
async function listen<T extends net.Server>(server: T): Promise<{ server: T; port: number }> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => sockets.add(socket));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanups.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return { server, port: (server.address() as net.AddressInfo).port };
}

/** A store: https with `cert` (the valid one unless told), else http. */
async function store(
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  cert: { private: string; cert: string } | 'http' = good,
): Promise<Store> {
  const { server, port } = await listen(
    cert === 'http' ? http.createServer() : https.createServer({ key: cert.private, cert: cert.cert }),
  );
  const self: Store = { port, requests: [], connections: 0 };
  server.on('connection', () => self.connections++);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    self.requests.push(req);
    handler(req, res);
  });
  return self;
}

const ok = () => (_req: http.IncomingMessage, res: http.ServerResponse) => res.end('{"ok":true}');
const at = (text: string) => new URL(text);

/** The StoreHttpError a promise rejects with; its kind, message, and that it shows no secret. */
async function refused(promise: Promise<unknown>, kind: StoreHttpErrorKind, message?: string | RegExp) {
  const error = await promise.then(
    () => assert.fail('the request should have failed'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof StoreHttpError, util.inspect(error));
  assert.equal(error.kind, kind, error.message);
  if (typeof message === 'string') assert.equal(error.message, message);
  else if (message) assert.match(error.message, message);
  const shown = util.inspect(error, { depth: 10 });
  assert.ok(!shown.includes(SECRET) && !shown.includes(QUERY_SECRET), shown);
  return error;
}

test('checkStoreUrl: scheme, credentials and plain http', () => {
  const kind = (text: string, allowPrivate = false) => {
    try {
      checkStoreUrl(at(text), { allowPrivate });
      return 'accepted';
    } catch (error) {
      assert.ok(error instanceof StoreHttpError);
      return error.kind;
    }
  };
  assert.equal(kind('https://boutique.example.fr/'), 'accepted');
  assert.equal(kind(`https://${PUBLIC}/`), 'accepted');
  assert.equal(kind('https://[2606:4700::1111]/'), 'accepted');
  assert.equal(kind('ftp://boutique.example.fr/'), 'invalid-address');
  assert.equal(kind('file:///etc/passwd'), 'invalid-address');
  assert.equal(kind('https://admin:motdepasse@boutique.example.fr/'), 'invalid-address');
  assert.equal(kind('https://admin@boutique.example.fr/'), 'invalid-address');
  assert.equal(kind('https://admin:motdepasse@boutique.example.fr/', true), 'invalid-address');
  assert.equal(kind('http://boutique.example.fr/'), 'insecure');
  assert.equal(kind('http://127.0.0.1:8080/', true), 'accepted');
  assert.throws(() => checkStoreUrl(at('http://boutique.example.fr/'), { allowPrivate: false }), {
    message: 'Adresse en http:// refusée : la connexion à la boutique doit être chiffrée (https://)',
  });
});

test('checkStoreUrl: IP literals of internal services, in every spelling, are refused', () => {
  const literals = [
    '127.0.0.1',
    '127.1', // shorthand
    '2130706433', // decimal
    '0x7f.1', // hex
    '0177.0.0.1', // octal
    '0x7f000001',
    '127.0.0.1.', // trailing dot
    '0.0.0.0',
    '0',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254', // cloud metadata
    '100.100.100.200', // Alibaba's metadata, carrier-grade NAT
    '203.0.113.5', // documentation
    '255.255.255.255',
    '224.0.0.1',
    '[::1]',
    '[::]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::7f00:1]', // IPv4-compatible (deprecated)
    '[fd00:ec2::254]', // AWS metadata over IPv6
    '[fe80::1]',
    '[64:ff9b::7f00:1]', // NAT64
    '[2002:7f00:1::]', // 6to4
  ];
  for (const host of literals) {
    const url = at(`https://${host}/wp-json/wc/v3/orders`);
    assert.throws(
      () => checkStoreUrl(url, { allowPrivate: false }),
      (error: unknown) =>
        error instanceof StoreHttpError &&
        error.kind === 'blocked-address' &&
        error.message.startsWith(
          `Adresse refusée : ${url.hostname} désigne une adresse privée ou interne (`,
        ) &&
        error.message.includes('STORE_ALLOW_PRIVATE=1'),
      host,
    );
    assert.doesNotThrow(() => checkStoreUrl(url, { allowPrivate: true }), host);
  }
});

test('storeGet refuses internal IP literals and localhost before connecting', async () => {
  const s = await store(ok());
  for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '127.1', '2130706433', 'localhost']) {
    const url = at(`https://${host}:${s.port}/?consumer_secret=${QUERY_SECRET}`);
    // localhost through the real resolver (no `resolve` option).
    await refused(storeGet(url, AUTH, { allowPrivate: false }), 'blocked-address', /STORE_ALLOW_PRIVATE=1/);
  }
  assert.equal(s.connections, 0);
});

test('a name resolving to an internal address is refused at connection time (DNS rebinding)', async () => {
  const s = await store(ok());
  const get = (name: string) => storeGet(at(`https://${name}:${s.port}/`), AUTH, publicStore);
  await refused(
    get('rebind.example.fr'),
    'blocked-address',
    'Adresse refusée : rebind.example.fr désigne une adresse privée ou interne (127.0.0.1) ; pour un essai ' +
      'local, l’opérateur du service peut les autoriser avec STORE_ALLOW_PRIVATE=1',
  );
  await refused(get('interne.example.fr'), 'blocked-address', /\(10\.0\.0\.1\)/);
  await refused(get('mixte.example.fr'), 'blocked-address', /\(10\.0\.0\.1\)/); // any of its addresses
  await refused(get('mappee.example.fr'), 'blocked-address', /::ffff:127\.0\.0\.1/);
  assert.equal(s.connections, 0);
  // The same name, checked again on each request: a second answer cannot slip through.
  let calls = 0;
  const flip: StoreHttpOptions['resolve'] = async () => [
    { address: calls++ === 0 ? PUBLIC : '127.0.0.1', family: 4 },
  ];
  const url = at(`https://boutique.example.fr:${s.port}/`);
  assert.equal((await storeGet(url, AUTH, { ...publicStore, resolve: flip })).status, 200);
  await refused(storeGet(url, AUTH, { ...publicStore, resolve: flip }), 'blocked-address');
});

test('a public store: status, lower-cased headers, body, url, date, decompression', async () => {
  const s = await store((req, res) => {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    res.setHeader('Date', 'Tue, 03 Jun 2025 10:20:30 GMT');
    res.setHeader('X-WP-Total', '42');
    res.setHeader('Set-Cookie', ['a=1', 'b=2']);
    if (path === '/gzip') {
      res.setHeader('Content-Encoding', 'gzip');
      res.end(zlib.gzipSync('{"compressed":"gzip"}'));
    } else if (path === '/br') {
      res.setHeader('Content-Encoding', 'br');
      res.end(zlib.brotliCompressSync('{"compressed":"br"}'));
    } else if (path === '/deflate') {
      res.setHeader('Content-Encoding', 'deflate');
      res.end(zlib.deflateSync('{"compressed":"deflate"}'));
    } else res.writeHead(404).end('{"code":"rest_no_route"}');
  });
  const base = `https://boutique.example.fr:${s.port}`;
  const response = await storeGet(at(`${base}/gzip?consumer_key=ck`), AUTH, publicStore);
  assert.equal(response.status, 200);
  assert.equal(response.body.toString(), '{"compressed":"gzip"}');
  assert.equal(response.headers['x-wp-total'], '42');
  assert.equal(response.headers['set-cookie'], 'a=1, b=2');
  assert.equal(response.url.href, `${base}/gzip?consumer_key=ck`);
  assert.equal(response.date?.toISOString(), '2025-06-03T10:20:30.000Z');
  assert.equal(s.requests[0]?.headers['accept-encoding'], 'gzip, deflate, br');
  assert.equal(s.requests[0]?.headers.authorization, AUTH.authorization);
  assert.equal((await storeGet(at(`${base}/br`), AUTH, publicStore)).body.toString(), '{"compressed":"br"}');
  assert.equal(
    (await storeGet(at(`${base}/deflate`), {}, publicStore)).body.toString(),
    '{"compressed":"deflate"}',
  );
  const missing = await storeGet(at(`${base}/nope`), AUTH, publicStore); // not an error
  assert.equal(missing.status, 404);
  assert.equal(missing.body.toString(), '{"code":"rest_no_route"}');
});

test('an invalid or missing Date header gives no date', async () => {
  const s = await store((req, res) => {
    if (req.url === '/bad') res.setHeader('Date', 'hier');
    else res.sendDate = false;
    res.end();
  }, 'http');
  assert.equal((await storeGet(at(`http://local.test:${s.port}/bad`), {}, devStore)).date, undefined);
  assert.equal((await storeGet(at(`http://local.test:${s.port}/none`), {}, devStore)).date, undefined);
});

test('TLS: a self-signed, expired or misnamed certificate is refused in French', async () => {
  const s = await store(ok());
  const url = at(`https://boutique.example.fr:${s.port}/?consumer_secret=${QUERY_SECRET}`);
  await refused(
    storeGet(url, AUTH, { allowPrivate: false, resolve }),
    'tls',
    'Certificat TLS invalide pour boutique.example.fr : certificat auto-signé',
  );
  // Even STORE_ALLOW_PRIVATE=1 verifies certificates.
  await refused(storeGet(url, AUTH, { allowPrivate: true, resolve }), 'tls');
  await refused(
    storeGet(at(`https://autre.example.fr:${s.port}/`), AUTH, publicStore),
    'tls',
    'Certificat TLS invalide pour autre.example.fr : le certificat est établi pour un autre nom',
  );
  const old = await store(ok(), expired);
  await refused(
    storeGet(at(`https://boutique.example.fr:${old.port}/`), AUTH, { ...publicStore, ca: [expired.cert] }),
    'tls',
    'Certificat TLS invalide pour boutique.example.fr : certificat expiré',
  );
  const plain = await store(ok(), 'http'); // https:// to a server speaking plain http
  await refused(storeGet(at(`https://boutique.example.fr:${plain.port}/`), AUTH, publicStore), 'tls', /TLS/);
});

test('http:// is refused without STORE_ALLOW_PRIVATE, accepted with it', async () => {
  const s = await store(ok(), 'http');
  await refused(
    storeGet(at(`http://boutique.example.fr:${s.port}/`), AUTH, publicStore),
    'insecure',
    'Adresse en http:// refusée : la connexion à la boutique doit être chiffrée (https://)',
  );
  assert.equal(s.connections, 0);
  assert.equal((await storeGet(at(`http://local.test:${s.port}/`), AUTH, devStore)).status, 200);
  assert.equal((await storeGet(at(`http://127.0.0.1:${s.port}/`), AUTH, { allowPrivate: true })).status, 200);
});

test('user:password@ in the address is refused', async () => {
  await refused(
    storeGet(at(`https://ck:${SECRET}@boutique.example.fr/`), {}, publicStore),
    'invalid-address',
    /ni identifiant ni mot de passe/,
  );
});

test('redirects: each hop is checked like the first', async () => {
  const internal = await store(ok(), 'http');
  const s = await store((req, res) => {
    const targets: Record<string, string> = {
      '/to-name': 'https://interne.example.fr/',
      '/to-literal': `https://127.0.0.1:${internal.port}/`,
      '/to-metadata': 'http://169.254.169.254/latest/meta-data/',
      '/to-http': `http://boutique.example.fr:${internal.port}/`,
      '/to-ftp': 'ftp://boutique.example.fr/',
    };
    res.writeHead(302, { location: targets[req.url ?? ''] ?? '/' }).end();
  });
  const get = (path: string) =>
    storeGet(at(`https://boutique.example.fr:${s.port}${path}`), AUTH, publicStore);
  await refused(get('/to-name'), 'blocked-address', /interne\.example\.fr .*\(10\.0\.0\.1\)/);
  await refused(get('/to-literal'), 'blocked-address', /\(127\.0\.0\.1\)/);
  await refused(get('/to-metadata'), 'insecure');
  await refused(
    get('/to-http'),
    'insecure',
    'Redirection refusée : boutique.example.fr renvoie vers une adresse non chiffrée (http://)',
  );
  await refused(get('/to-ftp'), 'invalid-address');
  assert.equal(internal.connections, 0);
});

test('redirects: followed for 301, 302, 303, 307, 308; authorization kept on the same origin only', async () => {
  const s = await store((req, res) => {
    const host = req.headers.host ?? '';
    const [, status, rest] = /^\/(\d{3})(\/.*)$/.exec(req.url ?? '') ?? [];
    if (status && rest) res.writeHead(Number(status), { location: rest }).end('moved');
    else if (req.url === '/away')
      res.writeHead(302, { location: `https://cdn.example.fr:${s.port}/back` }).end();
    else if (req.url === '/back')
      res.writeHead(302, { location: `https://${host.replace('cdn', 'boutique')}/end` }).end();
    else res.end(`${host} ${req.headers.authorization ?? 'none'} ${req.headers.cookie ?? 'none'}`);
  });
  const base = `https://boutique.example.fr:${s.port}`;
  const headers = { ...AUTH, Cookie: 'session=1' };
  const same = await storeGet(at(`${base}/301/308/303/307/302/end`), headers, publicStore);
  assert.equal(same.status, 200);
  assert.equal(same.url.href, `${base}/end`);
  assert.equal(same.body.toString(), `boutique.example.fr:${s.port} ${AUTH.authorization} session=1`);
  // Leaving the origin drops the credentials, for good: not restored on coming back.
  const away = await storeGet(at(`${base}/away`), headers, publicStore);
  assert.equal(away.url.href, `${base}/end`);
  assert.equal(away.body.toString(), `boutique.example.fr:${s.port} none none`);
  assert.deepEqual(
    s.requests.slice(-3).map((r) => [r.url, r.headers.authorization ?? 'none']),
    [
      ['/away', AUTH.authorization],
      ['/back', 'none'],
      ['/end', 'none'],
    ],
  );
  // A redirect without Location is an answer like another.
  const bare = await store((_req, res) => res.writeHead(302).end('no location'));
  const answer = await storeGet(at(`https://boutique.example.fr:${bare.port}/`), AUTH, publicStore);
  assert.deepEqual([answer.status, answer.body.toString()], [302, 'no location']);
});

test('redirects: at most maxRedirects', async () => {
  const s = await store((req, res) => {
    const n = Number(req.url?.slice(1));
    res.writeHead(302, { location: `/${n + 1}` }).end();
  });
  const url = at(`https://boutique.example.fr:${s.port}/0`);
  await refused(
    storeGet(url, AUTH, { ...publicStore, maxRedirects: 3 }),
    'too-many-redirects',
    /^Trop de redirections : boutique\.example\.fr/,
  );
  assert.equal(s.requests.length, 4);
  await refused(storeGet(url, AUTH, publicStore), 'too-many-redirects');
  assert.equal(s.requests.length, 4 + 6); // default 5
});

test('timeout: a store that never answers, one that trickles its body', async () => {
  const silent = await store(() => undefined, 'http');
  let started = Date.now();
  await refused(
    storeGet(at(`http://local.test:${silent.port}/`), AUTH, { ...devStore, timeoutMs: 200 }),
    'timeout',
    'La boutique n’a pas répondu en 0,2 s',
  );
  assert.ok(Date.now() - started < 2000);
  const trickle = await store((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const timer = setInterval(() => res.write(' '), 20);
    res.on('close', () => clearInterval(timer));
  }, 'http');
  started = Date.now();
  await refused(
    storeGet(at(`http://local.test:${trickle.port}/`), AUTH, { ...devStore, timeoutMs: 300 }),
    'timeout',
  );
  assert.ok(Date.now() - started < 2000);
  // Over https, through the TLS handshake: a TCP server that accepts and says nothing.
  const { port } = await listen(net.createServer(() => undefined));
  await refused(
    storeGet(at(`https://boutique.example.fr:${port}/`), AUTH, { ...publicStore, timeoutMs: 200 }),
    'timeout',
  );
});

test('too large: the body, and the decompressed body (zip bomb)', async () => {
  const bomb = zlib.gzipSync(Buffer.alloc(8 * MIB)); // 8 KiB on the wire
  const s = await store((req, res) => {
    if (req.url === '/bomb') {
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(bomb);
    } else res.end(Buffer.alloc(Number(req.url?.slice(1)), 'x'));
  });
  const get = (path: string, maxBodyBytes: number) =>
    storeGet(at(`https://boutique.example.fr:${s.port}${path}`), AUTH, { ...publicStore, maxBodyBytes });
  assert.equal((await get('/1000', 1000)).body.length, 1000);
  await refused(
    get('/1001', 1000),
    'too-large',
    'Réponse trop volumineuse : boutique.example.fr a renvoyé plus de 1000 octets',
  );
  await refused(get('/bomb', MIB), 'too-large', /plus de 1 Mio$/);
  await refused(get(`/${2 * MIB + 1}`, 2 * MIB), 'too-large', /plus de 2 Mio$/);
});

test('unreadable answers: bad compression, not HTTP', async () => {
  const s = await store((req, res) => {
    const encoding = req.url?.slice(1) ?? '';
    res
      .writeHead(200, { 'content-encoding': encoding })
      .end(encoding === 'gzip' ? zlib.gzipSync('{}').subarray(0, 12) : 'garbage');
  });
  for (const encoding of ['gzip', 'br', 'deflate']) {
    await refused(
      storeGet(at(`https://boutique.example.fr:${s.port}/${encoding}`), AUTH, publicStore),
      'connection',
      'Réponse illisible de boutique.example.fr : compression invalide',
    );
  }
  const junk = await listen(net.createServer((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n')));
  await refused(
    storeGet(at(`http://local.test:${junk.port}/`), AUTH, devStore),
    'connection',
    'Adresse injoignable : local.test ne répond pas (réponse HTTP invalide)',
  );
});

test('connection refused, unknown names', async () => {
  const closed = net.createServer().listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const port = (closed.address() as net.AddressInfo).port;
  closed.close();
  await once(closed, 'close');
  await refused(
    storeGet(at(`http://local.test:${port}/`), AUTH, devStore),
    'connection',
    'Adresse injoignable : local.test ne répond pas (connexion refusée)',
  );
  await refused(storeGet(at(`http://127.0.0.1:${port}/`), AUTH, devStore), 'connection', /connexion refusée/);
  // Several addresses, all refused: Node's autoSelectFamily reports an AggregateError.
  await refused(
    storeGet(at(`http://double.test:${port}/`), AUTH, devStore),
    'connection',
    /connexion refusée/,
  );
  await refused(
    storeGet(at(`https://inconnue.example.fr/?consumer_secret=${QUERY_SECRET}`), AUTH, publicStore),
    'dns',
    'Adresse introuvable : le nom inconnue.example.fr n’existe pas',
  );
  await refused(
    storeGet(at('https://vide.example.fr/'), AUTH, { ...publicStore, resolve: async () => [] }),
    'dns',
  );
  const again = async () => {
    throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
  };
  await refused(
    storeGet(at('https://boutique.example.fr/'), AUTH, { ...publicStore, resolve: again }),
    'dns',
  );
});

test('Node calls lookup with { all: true } (autoSelectFamily) or without: both are answered', async () => {
  const s = await store(ok(), 'http'); // on 127.0.0.1 only: ::1 refuses
  const url = at(`http://double.test:${s.port}/`);
  const before = net.getDefaultAutoSelectFamily();
  try {
    net.setDefaultAutoSelectFamily(true); // the whole list is handed over: ::1 fails, 127.0.0.1 answers
    assert.equal((await storeGet(url, AUTH, devStore)).status, 200);
    assert.equal((await storeGet(at(`http://local.test:${s.port}/`), AUTH, devStore)).status, 200);
    net.setDefaultAutoSelectFamily(false); // one address: the first
    await refused(storeGet(url, AUTH, devStore), 'connection', /connexion refusée/);
    assert.equal((await storeGet(at(`http://local.test:${s.port}/`), AUTH, devStore)).status, 200);
  } finally {
    net.setDefaultAutoSelectFamily(before);
  }
});

test('the caller’s signal aborts the request', async () => {
  const silent = await store(() => undefined, 'http');
  const controller = new AbortController();
  const pending = storeGet(at(`http://local.test:${silent.port}/`), AUTH, devStore, controller.signal);
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(pending, { name: 'AbortError' });
  await assert.rejects(
    storeGet(at(`http://local.test:${silent.port}/`), AUTH, devStore, AbortSignal.abort()),
    { name: 'AbortError' },
  );
});

test('kept connections: one pass’s requests share a connection; another host, a redirect’s, gets its own, checked; closing ends them', async () => {
  const s = await store(ok());
  const kept = new KeptConnections();
  const options = { ...publicStore, keptConnections: kept };
  const url = at(`https://boutique.example.fr:${s.port}/`);
  for (let i = 0; i < 5; i++) assert.equal((await storeGet(url, AUTH, options)).status, 200);
  assert.equal(s.connections, 1, 'five requests, one TLS connection');
  // Without kept connections (a connection test, a webhook's fetch), one per request, as before.
  for (let i = 0; i < 2; i++) assert.equal((await storeGet(url, AUTH, publicStore)).status, 200);
  assert.equal(s.connections, 3);
  // A name that now resolves to an internal address is refused on its own connection.
  await refused(storeGet(at(`https://rebind.example.fr:${s.port}/`), AUTH, options), 'blocked-address');
  // A redirect to another host opens a connection of its own, its address checked.
  const moved = await store((_req, res) =>
    res.writeHead(302, { location: `https://interne.example.fr:${s.port}/` }).end(),
  );
  await refused(storeGet(at(`https://cdn.example.fr:${moved.port}/`), AUTH, options), 'blocked-address');
  kept.close();
  assert.equal((await storeGet(url, AUTH, publicStore)).status, 200); // the store still answers
});
