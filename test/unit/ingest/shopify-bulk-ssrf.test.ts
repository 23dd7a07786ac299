// Issue 21 item 1: the SSRF rules of every store request apply to the bulk operation's file too
// (its address comes from the shop's answer, so a hostile shop could name an internal service).
// The address is refused before any connection: no server is needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectorError } from '../../../src/ingest/connectors/connector.js';
import { DEFAULT_RETRY } from '../../../src/ingest/connectors/polite-get.js';
import { readBulkSlice } from '../../../src/ingest/connectors/shopify/bulk.js';

const retry = { ...DEFAULT_RETRY, attempts: 1 };
const http = {
  allowPrivate: false,
  // Names resolve as an attacker would have them: to loopback and the cloud metadata address.
  resolve: (hostname: string) =>
    Promise.resolve([{ address: hostname.startsWith('meta') ? '169.254.169.254' : '127.0.0.1', family: 4 }]),
};

test('a bulk file at an internal, loopback, metadata or clear-text address is never fetched', async () => {
  for (const url of [
    'https://10.0.0.5/bulk.jsonl',
    'https://127.0.0.1:6379/bulk.jsonl',
    'https://[::1]/bulk.jsonl',
    'https://localhost.example/bulk.jsonl',
    'https://metadata.example/latest/meta-data',
    'http://storage.example/bulk.jsonl',
    'file:///etc/passwd',
  ]) {
    await assert.rejects(
      readBulkSlice(url, { key: url, size: undefined, to: undefined }, http, retry),
      (error: unknown) => error instanceof ConnectorError && /[a-zé]/.test(error.message),
      url,
    );
  }
});
