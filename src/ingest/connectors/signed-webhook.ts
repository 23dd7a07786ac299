// What both platforms' webhook receivers share: the body signed with the store's secret (base64
// HMAC-SHA256 of the raw bytes, compared in constant time), an order topic, a JSON body whose `id`
// (or another field, by topic) is the store's order id. Each platform names its own headers and topics.
import crypto from 'node:crypto';
import type { WebhookDelivery } from './connector.js';

/** The order id of a signed delivery, or why it is refused or ignored. */
export function readSignedOrderDelivery(
  delivery: { signature: string | undefined; topic: string | undefined; body: Buffer },
  secret: string,
  orderTopics: ReadonlySet<string>,
  /** The body's field naming the order, by topic (default `id`). */
  orderField: (topic: string) => string = () => 'id',
): { id: string } | Exclude<WebhookDelivery, { kind: 'order' } | { kind: 'ping' }> {
  const { signature, body } = delivery;
  if (signature === undefined || signature === '') return { kind: 'refused', reason: 'signature absente' };
  const expected = crypto.createHmac('sha256', secret).update(body).digest();
  const given = Buffer.from(signature, 'base64');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
    return { kind: 'refused', reason: 'signature invalide' };
  }
  const topic = delivery.topic ?? '';
  if (!orderTopics.has(topic)) return { kind: 'ignored', reason: `sujet ${topic.slice(0, 40)} non suivi` };
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    return { kind: 'ignored', reason: 'corps illisible' };
  }
  const field = orderField(topic);
  const id =
    typeof payload === 'object' && payload !== null && field in payload
      ? String((payload as Record<string, unknown>)[field] ?? '')
      : '';
  return /^\d{1,19}$/.test(id) ? { id } : { kind: 'ignored', reason: 'commande sans identifiant' };
}
