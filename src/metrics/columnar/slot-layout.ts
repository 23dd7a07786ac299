// Where a row's sums lie in a report's Float64Array: at slot × SLOT + one of these, exact integer
// cents in doubles (below 2^53, which the snapshot guarantees). Shared by the pass over orders
// (execute.ts) and the one over their lines (line-scan.ts).
export const ORDERS = 0;
export const ITEMS = 1;
export const GROSS = 2;
export const NET = 3;
export const TAXES = 4;
export const SHIPPING = 5;
export const UNIQUE = 6;
export const NEW_CUSTOMERS = 7;
export const RETURNING_CUSTOMERS = 8;
/** U4: the last customer counted in the slot, so that a customer counts once per row. */
export const LAST_CUSTOMER = 9;
// Section 15 (line-scan.ts): L3's sums (net sales is gross − discounts − refunds), and L4's last
// order counted in the slot, so that an order counts once per row at line grain.
export const UNITS_SOLD = 10;
export const UNITS_REFUNDED = 11;
export const PRODUCT_GROSS = 12;
export const PRODUCT_DISCOUNTS = 13;
export const PRODUCT_REFUNDS = 14;
export const LAST_ORDER = 15;
export const SLOT = 16;
