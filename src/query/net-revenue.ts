// S2/S3: the one definition of an order's net revenue, used by the API's net_revenue and
// average_order_value and by the web application's Revenue report.
import type { Deduction } from '../catalog.js';

/**
 * SQL expression of net(order) for the alias `o` of an orders row. A refunded amount is deducted
 * once: with `refunds` on, the refunded tax and shipping are not deducted again under `taxes`
 * and `shipping`. Built only from the fixed deduction names, never from request text.
 */
export function netRevenueSql(deductions: readonly Deduction[], o = 'o'): string {
  const refunds = deductions.includes('refunds');
  const terms = [`${o}.total`];
  if (refunds) terms.push(`${o}.refund_total`);
  if (deductions.includes('taxes'))
    terms.push(refunds ? `(${o}.tax_total - ${o}.refund_tax)` : `${o}.tax_total`);
  if (deductions.includes('shipping')) {
    terms.push(refunds ? `(${o}.shipping_total - ${o}.refund_shipping)` : `${o}.shipping_total`);
  }
  if (deductions.includes('fees')) terms.push(`${o}.fee_total`);
  return terms.join(' - ');
}
