// U1: an order's customer is its email trimmed and lower-cased, when the email is usable;
// otherwise the order is anonymous (null). Customers span all stores of an organization.
// Only a keyed hash of that identity is ever stored (issue 7, "Personal data"): the figures only
// need to know whether two orders share a customer, never who the customer is.
import { customerHash } from '../db/customer-hash.js';

export { customerHash, customerKeyOf } from '../db/customer-hash.js';

/** The U1 identity of an email (trimmed, lower-cased), or null when the email is unusable. */
export function normalizedEmail(email: unknown): string | null {
  if (typeof email !== 'string') return null;
  const candidate = email.trim().toLowerCase();
  // "No spaces": any whitespace left after trimming (tabs, non-breaking spaces…) makes it unusable.
  if (candidate === '' || /\s/.test(candidate)) return null;
  // One '@', a non-empty local part before it, a dot in the domain after it.
  const at = candidate.indexOf('@');
  if (at <= 0 || candidate.includes('@', at + 1) || !candidate.includes('.', at + 1)) return null;
  return candidate;
}

/** The stored U1 customer of an email: the keyed hash of its identity, or null for an anonymous order. */
export function customerIdentity(email: unknown, customerKey: Buffer): string | null {
  const normalized = normalizedEmail(email);
  return normalized === null ? null : customerHash(customerKey, normalized);
}
