// I1 under a crash: an import killed mid-way leaves no partial data, and the next import works.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_EXCLUDED_STATUSES } from '../../src/catalog.js';
import { generateDemoOrders } from '../../src/demo/generate.js';
import {
  BIN,
  runCli,
  startServerOnFreshDatabase,
  type FreshServer,
  type ServerProcess,
} from '../helpers/processes.js';

describe('a killed import', () => {
  let env: Record<string, string>;
  let fresh: FreshServer;
  let stoppedByTest = false;
  let server: ServerProcess;
  let file: string;
  let total = 0;
  let counted = 0; // the orders the API counts: statuses not excluded by default (S1)

  before(async () => {
    fresh = await startServerOnFreshDatabase();
    ({ env, server } = fresh);
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sm-kill-')), 'orders.ndjson');
    const lines: string[] = [];
    for (const o of generateDemoOrders({ endDate: '2026-11-22', days: 400, ordersPerDay: 150 }))
      lines.push(JSON.stringify(o));
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    total = lines.length; // ids are unique per store: one order a line
    counted = lines.filter(
      (l) => !(DEFAULT_EXCLUDED_STATUSES as readonly string[]).includes(JSON.parse(l).status),
    ).length;
    assert.equal((await runCli(['org', 'create', '--name', 'Crash'], env)).code, 0);
  });
  after(async () => {
    if (!stoppedByTest) await fresh.stop();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  let calls = 0;
  const count = async () => {
    const key = JSON.parse(
      (await runCli(['key', 'create', '--org', 'crash', '--name', 'k', '--json'], env)).stdout,
    ).key;
    await runCli(['subscription', 'set', '--org', 'crash', '--state', 'active'], env);
    const response = await fetch(
      `${server.baseUrl}/api/reports/tabular?metrics=orders&from=2025-01-01&to=2026-11-22&limit=${++calls}`,
      {
        headers: { authorization: `Bearer ${key}` },
      },
    ); // a new limit each time: a new query, never a cached answer (C1)
    return ((await response.json()) as { rows: { orders: number }[] }).rows[0]?.orders;
  };

  test('I1: SIGKILL during the import writes no order; the server keeps answering; a new import completes', async () => {
    for (const delayMs of [400, 1500, 3000]) {
      const child = spawn(process.execPath, [BIN, 'import', '--org', 'crash', file], {
        env: { ...process.env, ...env },
      });
      await new Promise((r) => setTimeout(r, delayMs));
      const exited = child.exitCode !== null || child.signalCode !== null;
      child.kill('SIGKILL');
      if (!exited) await new Promise((r) => child.once('exit', r));
      const seen = await count();
      assert.ok(
        seen === 0 || seen === counted,
        `after a kill at ${delayMs} ms: ${seen} of ${counted} orders (all or nothing)`,
      );
      if (seen === counted) break; // the import had already committed: nothing partial either way
    }
    const result = await runCli(['import', '--org', 'crash', file, '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    const { imported, updated } = JSON.parse(result.stdout) as { imported: number; updated: number };
    assert.equal(imported + updated, total);
    assert.equal(await count(), counted);
  });

  test('graceful shutdown: SIGTERM lets a report in flight finish, then the server exits 0', async () => {
    const key = JSON.parse(
      (await runCli(['key', 'create', '--org', 'crash', '--name', 'shutdown', '--json'], env)).stdout,
    ).key;
    const inFlight = fetch(
      `${server.baseUrl}/api/reports/tabular?metrics=orders,net_revenue,unique_customers,new_customers&dimensions=date,store,country&from=2025-01-01&to=2026-11-22&limit=99999`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    await new Promise((r) => setTimeout(r, 30));
    stoppedByTest = true;
    const exited = fresh.stop();
    const response = await inFlight;
    assert.equal(response.status, 200);
    const body = (await response.json()) as { rowCount: number };
    assert.ok(body.rowCount > 1000, `${body.rowCount} rows`);
    assert.equal(await exited, 0);
    await assert.rejects(fetch(`${server.baseUrl}/healthz`), 'no longer accepting');
  });
});
