// Hostile input against a real server, timed from outside as a load balancer would (issue 7): the
// server runs as its own process on a fresh embedded database with the demo data, and this process
// probes GET /healthz every 20 ms while it sends, one after the other, the inputs that froze or
// exhausted the service before: a 20 MB single-line upload, a 22 MB upload of `{}` lines (six
// errors every three bytes), 200 parallel uncached heavy reports, 100 parallel CSV reports with the
// largest filter lists, 300 bad keys behind forged X-Forwarded-For headers, 50 parallel sign-ups
// and 60 over-long forms; then a WooCommerce stand-in's backfill through the connect form, 2,000
// forged webhook deliveries, 200 over the 1 MiB bound, 3,000 signed duplicates of one delivery and
// 50 parallel connection tries with hostile addresses. For each phase it prints the /healthz latencies (p50, p99, max), what the
// hostile requests got, and the server's resident memory at the end of the phase.
// Usage: npm run bench:hostile
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, type ServerProcess } from '../test/helpers/processes.js';
import { Client } from '../test/helpers/web-client.js';
import { FakeWooCommerce } from '../test/helpers/fake-woocommerce.js';
import { slowReadersPhases } from './hostile-slow-readers.js';
import { hostileFarDates } from './hostile-far-dates.js';

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** The server's resident memory in MB (its pid is in the embedded database's lock file). */
function serverRssMb(dataDir: string): number {
  const { pid } = JSON.parse(fs.readFileSync(path.join(dataDir, 'host.json'), 'utf8')) as { pid: number };
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

async function probing<T>(
  server: ServerProcess,
  work: () => Promise<T>,
): Promise<{ result: T; ms: number[] }> {
  const ms: number[] = [];
  let running = true;
  const probes = (async () => {
    while (running) {
      const started = performance.now();
      await (await fetch(`${server.baseUrl}/healthz`)).arrayBuffer();
      ms.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    return { result: await work(), ms };
  } finally {
    running = false;
    await probes;
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sm-hostile-'));
// The stand-in store (issue 11) runs in this process; the server trusts its certificate.
const store = await FakeWooCommerce.start();
store.addOrders(5_000, 9);
const storeCa = path.join(dataDir, 'store-ca.pem');
fs.writeFileSync(storeCa, store.ca);
// A rate limit high enough that the report phases meet the computation slots, not R1.
const server = await startServer({
  DATA_DIR: dataDir,
  DEMO: '1',
  IMPORT_MAX_BYTES: String(64 * 1024 ** 2),
  RATE_LIMIT_MAX: '100000',
  STORE_ALLOW_PRIVATE: '1',
  NODE_EXTRA_CA_CERTS: storeCa,
});
const banner = server.output();
const key = /smk_[0-9A-Za-z]{38}/.exec(banner)?.[0];
const login = /Connexion de démo \(application web\) : (\S+) \/ (\S+)/.exec(banner);
if (!key || !login) throw new Error(`no demo access in the banner:\n${banner}`);
const client = new Client(server.baseUrl);
if ((await client.login(login[1] ?? '', login[2] ?? '')).status !== 303) throw new Error('demo login failed');
console.log(`load average at start: ${fs.readFileSync('/proc/loadavg', 'utf8').trim()}`);
console.log('phase                               | /healthz p50 | p99 | max | hostile answers | server RSS');

async function phase(name: string, work: () => Promise<string>): Promise<void> {
  const { result, ms } = await probing(server, work);
  const f = (n: number) => `${n.toFixed(0)} ms`;
  console.log(
    `${name.padEnd(35)} | ${f(percentile(ms, 50)).padStart(12)} | ${f(percentile(ms, 99))} | ${f(Math.max(...ms))} | ${result} | ${serverRssMb(dataDir)} MB`,
  );
}

/** "n × status" for each status met, 0 meaning a dropped connection. */
function tally(statuses: readonly number[]): string {
  const count = new Map<number, number>();
  for (const s of statuses) count.set(s, (count.get(s) ?? 0) + 1);
  return [...count].map(([s, n]) => `${n} × ${s || 'dropped'}`).join(', ');
}

const api = (query: string, headers: Record<string, string> = {}) =>
  fetch(`${server.baseUrl}/api/reports/tabular?${query}`, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  }).then(
    async (r) => (await r.arrayBuffer(), r.status),
    () => 0,
  );

const upload = async (name: string, content: Blob): Promise<string> => {
  const token = await client.token('/settings/stores');
  const answer = await client.upload('/settings/stores/import', { _csrf: token }, { name, content });
  const location = answer.headers.get('location') ?? '';
  for (let i = 0; i < 1200 && location; i++) {
    const answered = await client.get(location);
    const page = await answered.text();
    // 503: the page's database busy past PAGE_DEADLINE_MS (a large embedded import): asked again.
    if (answered.status !== 503 && !page.includes('http-equiv="refresh"')) {
      const state = /<title>([^<]*)<\/title>/.exec(page)?.[1] ?? '';
      return `${answer.status} at once, job page "${state}" after ${(i * 0.1).toFixed(1)} s`;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return `${answer.status}`;
};

await phase('idle, 3 s', async () => {
  await new Promise((r) => setTimeout(r, 3000));
  return '-';
});

await phase('one 20 MB line (browser import)', () =>
  upload(
    'long.ndjson',
    new Blob([`{"store":"https://x.example","id":"1","status":"${'x'.repeat(20 * 1024 ** 2)}"}\n`]),
  ),
);

await phase('22 MB of {} lines (browser import)', () =>
  upload('errors.ndjson', new Blob(['{}\n'.repeat((22 * 1024 ** 2) / 3)])),
);

await phase('200 parallel uncached heavy reports', async () =>
  tally(
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        api(
          `metrics=orders,net_revenue,unique_customers,new_customers&dimensions=date,store,country,customer_type,status&limit=${100_000 - i}`,
        ),
      ),
    ),
  ),
);

// Section 14 (issue 10): the largest filter lists the URL allows, deep offsets, week buckets and
// CSV answers of every row, each request different so that no cache answers, and a 6 KB Accept (12 KB of headers in all, under the 16 KiB bound).
await phase('100 parallel CSV, 1,000-value filters', async () => {
  const statuses = Array.from({ length: 998 }, (_, i) => `s${i}`).join(',');
  return tally(
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        api(
          `metrics=orders,net_revenue&dimensions=date,store,country,customer_type,status&granularity=week&offset=${i}&limit=100000&format=csv&filter.status=completed,processing,${statuses}`,
          { accept: `text/csv, ${'application/x-noise;q=0.1, '.repeat(200)}*/*;q=0.01` },
        ),
      ),
    ),
  );
});

await hostileFarDates({ baseUrl: server.baseUrl, key, client, phase }); // issue 18, finding 1

await phase('300 bad keys, forged X-Forwarded-For', async () =>
  tally(
    await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        fetch(`${server.baseUrl}/api/reports/catalog`, {
          headers: {
            authorization: `Bearer smk_${'A'.repeat(38)}`,
            'x-forwarded-for': `10.0.${i >> 8}.${i & 255}`,
          },
        }).then(
          (r) => r.status,
          () => 0,
        ),
      ),
    ),
  ),
);

await phase('50 parallel sign-ups, one address', async () => {
  const statuses = await Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      const c = new Client(server.baseUrl);
      const token = await c.token('/signup');
      const r = await c.post('/signup', {
        _csrf: token,
        organization: `Org ${i}`,
        email: 'same@example.com',
        password: `password number ${i}`,
      });
      return r.status;
    }),
  );
  return tally(statuses);
});

await phase('60 over-long forms (60 KB fields)', async () => {
  const token = await client.token('/settings/api-keys');
  const statuses = await Promise.all(
    Array.from({ length: 60 }, () =>
      client.post('/settings/api-keys', { _csrf: token, name: 'n'.repeat(60_000) }).then((r) => r.status),
    ),
  );
  return `${statuses.filter((s) => s === 400).length} × 400`;
});

// Issue 11: a store connected through the page, then what anyone may send to its webhook address.
let webhook = { url: '', secret: '' };
await phase('WooCommerce backfill, 5,000 orders', async () => {
  const token = await client.token('/settings/stores');
  const page = await (
    await client.post('/settings/stores/connect', {
      _csrf: token,
      platform: 'woocommerce',
      address: store.url,
      consumer_key: store.consumerKey,
      consumer_secret: store.consumerSecret,
    })
  ).text();
  const url = /id="webhook-url">([^<]+)</.exec(page)?.[1] ?? '';
  const secret = /id="webhook-secret">([^<]+)</.exec(page)?.[1] ?? '';
  if (!url || !secret) throw new Error('the store did not connect');
  webhook = { url: url.trim(), secret: secret.trim() };
  const started = performance.now();
  while (!(await (await client.get('/settings/stores/connections')).text()).includes('À jour.')) {
    await new Promise((r) => setTimeout(r, 200));
  }
  return `synced in ${((performance.now() - started) / 1000).toFixed(1)} s, ${store.requests.length} store requests, at most ${store.maxConcurrentRequests} at once`;
});

const order = store.allOrders()[0]?.id ?? 1;
const deliveries = async (count: number, send: () => Promise<{ status: number }>) => {
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent += 50) {
    statuses.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, count - sent) }, () =>
          send().then(
            (r) => r.status,
            () => 0,
          ),
        ),
      )),
    );
  }
  return tally(statuses);
};
await phase('2,000 forged webhooks (64 KB)', () =>
  deliveries(2_000, () =>
    store.deliver(webhook.url, 'order.updated', order, 'pas-le-secret', {
      body: `{"id":${order},"x":"${'x'.repeat(64 * 1024)}"}`,
    }),
  ),
);
await phase('200 webhooks of 1.5 MB', () =>
  deliveries(200, () =>
    store.deliver(webhook.url, 'order.updated', order, webhook.secret, {
      body: `{"id":${order},"x":"${'x'.repeat(1.5 * 1024 ** 2)}"}`,
    }),
  ),
);
await phase('3,000 signed duplicate deliveries', () =>
  deliveries(3_000, () => store.deliver(webhook.url, 'order.updated', order, webhook.secret)),
);
await phase('50 parallel hostile connects', async () => {
  const token = await client.token('/settings/stores');
  const targets = [
    'javascript:alert(1)',
    'https://[::ffff:127.0.0.1]:9',
    'ftp://0x7f.1/',
    `https://${'a'.repeat(3000)}.example`,
  ];
  return tally(
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        client
          .post('/settings/stores/connect', {
            _csrf: token,
            platform: 'woocommerce',
            address: targets[i % targets.length] ?? '',
            consumer_key: store.consumerKey,
            consumer_secret: store.consumerSecret,
          })
          .then(
            (r) => r.status,
            () => 0,
          ),
      ),
    ),
  );
});
await slowReadersPhases({ baseUrl: server.baseUrl, key, upload, phase, rssMb: () => serverRssMb(dataDir) });
console.log(`server exit: ${await server.stop()}`);
await store.close();
fs.rmSync(dataDir, { recursive: true, force: true });
