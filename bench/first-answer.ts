// The very first report after a restart (issue 28, item 2; issue 27, item 6), on an embedded data
// folder kept between runs: the first run generates N orders with their lines and imports them
// with the CLI (which saves the organization's snapshot file); every run then starts `serve` R
// times and, each time, asks one uncached report (10 metrics, two years, totals, Europe/Paris) as
// soon as the server answers HTTP, then nine more one at a time. Prints, per start: the time to
// listen, the first answer, the warm median and their ratio, the load average, and the server's
// `loaded` event. Ratios in one run, so that a machine shared with others compares like with like.
// Usage: node --max-old-space-size=6144 dist/bench/first-answer.js --keep DIR [--orders N] [--starts R]
//   [--database-url URL]: a PostgreSQL database instead of the embedded one (the data kept there, the
//   snapshot file in DIR as on the embedded engine; the same URL each run).
//   FIRST_SERVER_NODE_ARGS: node options of the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { METRICS } from '../src/catalog.js';
import { generateDemoOrders } from '../src/demo/generate.js';
import { cliJson, startServer, type ServerProcess } from '../test/helpers/processes.js';

const { values: args } = parseArgs({
  options: {
    keep: { type: 'string' },
    orders: { type: 'string', default: '1000000' },
    starts: { type: 'string', default: '2' },
    'database-url': { type: 'string' },
  },
});
if (!args.keep) throw new Error('--keep DIR: the folder that keeps the data between runs');
const DIR = path.resolve(args.keep);
const ORDERS = Number(args.orders);
const STARTS = Number(args.starts);
const NODE_ARGS = (process.env.FIRST_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const WARM_RUNS = 9;

const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const today = new Date().toISOString().slice(0, 10);
const from = new Date(Date.parse(`${today}T00:00:00Z`) - 729 * 86_400_000).toISOString().slice(0, 10);
const QUESTION = `metrics=${METRICS.map((m) => m.id).join(',')}&from=${from}&to=${today}&timezone=Europe%2FParis`;

interface Kept {
  readonly key: string;
  readonly orders: number;
}

/** The organization's key, after generating and importing the orders on the first run. */
async function kept(env: Record<string, string>): Promise<string> {
  const file = path.join(DIR, 'first-answer.json');
  if (fs.existsSync(file)) {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Kept;
    if (saved.orders !== ORDERS) throw new Error(`--keep: ${DIR} holds ${saved.orders} orders`);
    return saved.key;
  }
  fs.mkdirSync(DIR, { recursive: true });
  const orders = path.join(DIR, 'orders.ndjson');
  const out = fs.createWriteStream(orders);
  let written = 0;
  for (const order of generateDemoOrders({
    endDate: today,
    days: 1095,
    ordersPerDay: (ORDERS / 1095) * 1.1,
    lines: true,
  })) {
    if (written++ === ORDERS) break;
    if (!out.write(`${JSON.stringify(order)}\n`)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  const cli = cliJson(env);
  await cli('migrate');
  const { slug } = (await cli('org', 'create', '--name', 'First')) as { slug: string };
  await cli('subscription', 'set', '--org', slug, '--state', 'active');
  const key = String((await cli('key', 'create', '--org', slug, '--name', 'first')).key);
  const started = performance.now();
  await cli('import', '--org', slug, orders);
  console.log(`imported ${ORDERS} orders in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  fs.rmSync(orders);
  fs.writeFileSync(file, JSON.stringify({ key, orders: ORDERS } satisfies Kept));
  return key;
}

/** The secret key kept in DIR, so that every run's server reads what the first run's import wrote. */
function secretKey(): string {
  const file = path.join(DIR, 'secret-key');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(DIR, { recursive: true });
    fs.writeFileSync(file, crypto.randomBytes(32).toString('hex'), { mode: 0o600 });
  }
  return fs.readFileSync(file, 'utf8');
}

let asked = 0; // each question asks another limit: never the same cache key (C1)
async function ask(server: ServerProcess, key: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(
    `${server.baseUrl}/api/reports/tabular?${QUESTION}&limit=${100_000 - asked++}`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  );
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`status ${response.status}`);
  return performance.now() - started;
}

const env: Record<string, string> = {
  DATA_DIR: path.join(DIR, 'data'),
  // A server database asks for the instances' shared secret: one made for this folder's runs.
  ...(args['database-url'] ? { DATABASE_URL: args['database-url'], SECRET_KEY: secretKey() } : {}),
};
const key = await kept(env);
for (let start = 0; start < STARTS; start++) {
  const load = loadavg();
  const origin = performance.now();
  const server = await startServer(
    { ...env, HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '1000000000' },
    180_000,
    NODE_ARGS,
  );
  const listening = performance.now() - origin;
  try {
    const first = await ask(server, key);
    const warm: number[] = [];
    for (let run = 0; run < WARM_RUNS; run++) warm.push(await ask(server, key));
    const median = [...warm].sort((a, b) => a - b)[Math.floor(WARM_RUNS / 2)] as number;
    const loaded = /"event":"loaded"[^\n]*?"ms":(\d+)/.exec(server.stdout())?.[1];
    console.log(
      `listening ${listening.toFixed(0)} ms · first answer ${first.toFixed(0)} ms · warm p50 ${median.toFixed(0)} ms · ` +
        `first / warm ${(first / median).toFixed(1)}× · read back in ${loaded ?? '–'} ms · load ${load} → ${loadavg()}`,
    );
  } finally {
    await server.stop();
  }
}
