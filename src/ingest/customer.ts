// U1: an order's customer is its email trimmed and lower-cased, when the email is usable;
// otherwise the order is anonymous (null). Customers span all stores of an organization.

/** The U1 customer identity of an email, or null for an anonymous order. */
export function customerIdentity(email: unknown): string | null {
  if (typeof email !== 'string') return null;
  const candidate = email.trim().toLowerCase();
  // "No spaces": any whitespace left after trimming (tabs, non-breaking spaces…) makes it unusable.
  if (candidate === '' || /\s/.test(candidate)) return null;
  const parts = candidate.split('@');
  if (parts.length !== 2) return null;
  const [local, domain] = parts as [string, string];
  if (local === '' || !domain.includes('.')) return null;
  return candidate;
}
