// The platforms the service can connect, and the sync settings read from the configuration. A
// second platform adds its connector here; nothing else changes (reports never see connectors).
import type { Config } from '../../config.js';
import type { Platform, StoreConnector } from './connector.js';
import { DEFAULT_RETRY, type RetryPolicy } from './polite-get.js';
import type { SyncSettings } from './sync.js';
import { shopifyConnector } from './shopify/shopify.js';
import { woocommerceConnector } from './woocommerce/woocommerce.js';

export interface StoreSyncSetup {
  readonly connectors: Readonly<Record<Platform, StoreConnector>>;
  readonly settings: SyncSettings;
}

/**
 * `ca`: certificates to trust besides the usual ones (a test's stand-in store). `patience`: how
 * long a store's asked-for wait is waited in place, and who is told (`store sync`, issue 26).
 */
export function storeSyncSetup(
  config: Config,
  ca?: string | readonly string[],
  patience: Partial<Pick<RetryPolicy, 'maxRetryAfterS' | 'onWait'>> = {},
): StoreSyncSetup {
  const retry = { ...DEFAULT_RETRY, baseDelayMs: config.storeRetryBaseMs, ...patience };
  return {
    connectors: {
      woocommerce: woocommerceConnector(retry),
      shopify: shopifyConnector(config.shopifyApiVersion, retry, config.shopifyBulkPollMs),
    },
    settings: {
      intervalS: config.storeSyncIntervalS,
      pagesPerPass: 50,
      overlapS: 120,
      // A minute after a first failure by default; STORE_RETRY_BASE_MS scales it (tests).
      failureBaseS: Math.max(1, Math.round((60 * config.storeRetryBaseMs) / 1000)),
      http: {
        allowPrivate: config.storeAllowPrivate,
        timeoutMs: config.storeHttpTimeoutMs,
        ...(ca === undefined ? {} : { ca }),
      },
    },
  };
}
