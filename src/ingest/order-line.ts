// An order's lines (SPEC section 15, L1): what it sold, one entry a product or variant. Pure: the
// raw `lines` value of an order (an NDJSON array, or the array the CSV reader gathers from an
// order's rows, L8) becomes the lines as stored in order_lines (migration 017), or every faulty
// field, named `lines[k].field` with k counted from 0 as the array's place (I1).
import {
  BLANK_EDGES,
  amountProblem,
  boundedText,
  cents,
  hasBlankEdges,
  isMissing,
  parseAmount,
  shown,
  type Fail,
  type FieldError,
} from './field-checks.js';

/** A validated line, field for field the columns of order_lines (position is its place, from 0). */
export interface OrderLineRecord {
  line_id: string;
  product_id: string | null;
  variant_id: string | null;
  sku: string | null;
  product_name: string;
  variant_name: string | null;
  categories: string[];
  quantity: number;
  /** Amounts are exact decimal strings with two decimals ("12.30"), never binary floats. */
  subtotal: string;
  discount: string;
  refunded_quantity: number;
  refunded_amount: string;
}

/** L1's bounds: characters of each text, values of each count. */
export const LINE_BOUNDS = {
  lines: 1000,
  line_id: 64,
  product_id: 64,
  variant_id: 64,
  sku: 100,
  product_name: 500,
  variant_name: 500,
  categories: 20,
  category: 200,
  quantity: 1_000_000,
} as const;

/** L1's fields, in its table's order: the CSV columns of a line (L8). */
export const LINE_FIELDS = [
  'line_id',
  'product_id',
  'variant_id',
  'sku',
  'product_name',
  'variant_name',
  'categories',
  'quantity',
  'subtotal',
  'discount',
  'refunded_quantity',
  'refunded_amount',
] as const;

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A count as French writes it (1 000, with a narrow no-break space). */
export const thousands = (count: number): string => count.toLocaleString('fr-FR');

/**
 * One line's fields as they are read; `fail` names the field last read, `lines[k].field`. The
 * name is written only for an error: a valid line (nearly all of them) builds no string (I3,
 * issue 27 item 6: twelve names a line were a tenth of an import's reading thread).
 */
class LineFields {
  private field = '';

  constructor(
    private readonly record: Readonly<Record<string, unknown>>,
    private readonly k: number,
    private readonly errors: FieldError[],
  ) {}

  value(field: string): unknown {
    this.field = field;
    return Object.hasOwn(this.record, field) ? this.record[field] : undefined;
  }

  readonly fail: Fail = (message) => {
    this.errors.push({ field: `lines[${this.k}].${this.field}`, message });
    return undefined;
  };

  /** A problem of two fields together, named by the second one. */
  failOn(field: string, message: string): void {
    this.errors.push({ field: `lines[${this.k}].${field}`, message });
  }
}

// An identifier may come as a JSON number (platforms number their products): kept as its decimal
// text when exact, as the order's id is.
const identifier =
  (max: number, required: boolean) =>
  (value: unknown, fail: Fail): string | null | undefined => {
    if (isMissing(value)) return required ? fail('champ obligatoire manquant') : null;
    if (typeof value !== 'number') return boundedText(max)(value, fail);
    if (Number.isSafeInteger(value)) return String(value);
    return fail(`identifiant numérique inexact « ${shown(value)} » : envoyez-le en texte`);
  };
const lineIdOf = identifier(LINE_BOUNDS.line_id, true);
const productIdOf = identifier(LINE_BOUNDS.product_id, false);
const variantIdOf = identifier(LINE_BOUNDS.variant_id, false);

const optionalText =
  (max: number) =>
  (value: unknown, fail: Fail): string | null | undefined =>
    isMissing(value) ? null : boundedText(max)(value, fail);
const skuOf = optionalText(LINE_BOUNDS.sku);
const variantNameOf = optionalText(LINE_BOUNDS.variant_name);
const productNameOf = boundedText(LINE_BOUNDS.product_name);
const categoryText = boundedText(LINE_BOUNDS.category);

// A category as most are: a short string, neither blank nor holding a NUL or a lone surrogate;
// anything else goes through categoryText, which says what is wrong.
const plainCategory = (raw: unknown): string | undefined =>
  typeof raw === 'string' &&
  raw.length <= LINE_BOUNDS.category &&
  !isMissing(raw) &&
  !raw.includes('\u0000') &&
  raw.isWellFormed()
    ? raw
    : undefined;

function categoriesOf(value: unknown, fail: Fail): string[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail(`liste de catégories attendue, reçu « ${shown(value)} »`);
  if (value.length > LINE_BOUNDS.categories)
    return fail(`${value.length} catégories, ${LINE_BOUNDS.categories} au plus`);
  const categories: string[] = [];
  for (const [i, raw] of value.entries()) {
    const category =
      plainCategory(raw) ?? categoryText(raw, (message) => fail(`catégorie ${i + 1} : ${message}`));
    if (category === undefined) return undefined;
    if (categories.includes(category)) return fail(`catégorie « ${shown(category)} » en double`);
    categories.push(category);
  }
  return categories;
}

/** An integer from `least` to `most`, as a JSON number or digits. */
function countOf(value: unknown, least: number, most: number): number | undefined {
  const count =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\d+$/.test(value)
        ? Number(value)
        : NaN;
  return Number.isInteger(count) && count >= least && count <= most ? count : undefined;
}

function quantityOf(value: unknown, fail: Fail): number | undefined {
  if (isMissing(value)) return fail('champ obligatoire manquant');
  const most = LINE_BOUNDS.quantity;
  return (
    countOf(value, 1, most) ??
    fail(
      `quantité invalide « ${shown(value)} » : entier de 1 à ${thousands(most)} attendu${hasBlankEdges(value) ? `, ${BLANK_EDGES}` : ''}`,
    )
  );
}

function requiredAmount(value: unknown, fail: Fail): string | undefined {
  if (isMissing(value)) return fail('champ obligatoire manquant');
  return parseAmount(value) ?? fail(amountProblem(value));
}

const optionalAmount = (value: unknown, fail: Fail): string | undefined =>
  isMissing(value) ? '0.00' : requiredAmount(value, fail);

/** One line, or undefined when a field of it is faulty (each reported in `errors`). */
function validateLine(raw: unknown, k: number, errors: FieldError[]): OrderLineRecord | undefined {
  if (!isRecord(raw)) {
    errors.push({ field: `lines[${k}]`, message: `objet attendu pour une ligne, reçu « ${shown(raw)} »` });
    return undefined;
  }
  const before = errors.length;
  const line = new LineFields(raw, k, errors);
  const { fail } = line;
  const record = {
    line_id: lineIdOf(line.value('line_id'), fail),
    product_id: productIdOf(line.value('product_id'), fail),
    variant_id: variantIdOf(line.value('variant_id'), fail),
    sku: skuOf(line.value('sku'), fail),
    product_name: productNameOf(line.value('product_name'), fail),
    variant_name: variantNameOf(line.value('variant_name'), fail),
    categories: categoriesOf(line.value('categories'), fail),
    quantity: quantityOf(line.value('quantity'), fail),
    subtotal: requiredAmount(line.value('subtotal'), fail),
    discount: optionalAmount(line.value('discount'), fail),
    refunded_quantity: 0 as number | undefined,
    refunded_amount: optionalAmount(line.value('refunded_amount'), fail),
  };
  const refunded = line.value('refunded_quantity');
  record.refunded_quantity = isMissing(refunded)
    ? 0
    : (countOf(refunded, 0, record.quantity ?? LINE_BOUNDS.quantity) ??
      fail(`quantité remboursée invalide « ${shown(refunded)} » : entier de 0 à quantity attendu`));
  checkAmounts(record, line);
  return errors.length === before ? (record as OrderLineRecord) : undefined;
}

// L1: discount ≤ subtotal, refunded_amount ≤ subtotal − discount; exact, in integer cents.
function checkAmounts(
  record: { subtotal?: string; discount?: string; refunded_amount?: string },
  line: LineFields,
): void {
  const { subtotal, discount, refunded_amount: refunded } = record;
  if (subtotal === undefined || discount === undefined) return;
  if (cents(discount) > cents(subtotal)) {
    line.failOn('discount', `remise (${discount}) supérieure au sous-total (${subtotal})`);
    return;
  }
  if (refunded !== undefined && cents(refunded) > cents(subtotal) - cents(discount))
    line.failOn(
      'refunded_amount',
      `montant remboursé (${refunded}) supérieur au sous-total moins la remise (${subtotal} − ${discount})`,
    );
}

/**
 * An order's lines (L1): absent or null is no line; otherwise an array of at most 1,000 lines
 * whose line_id are distinct. Faulty fields go to `errors`; undefined then.
 */
export function validateLines(value: unknown, errors: FieldError[]): OrderLineRecord[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    errors.push({ field: 'lines', message: `tableau de lignes attendu, reçu « ${shown(value)} »` });
    return undefined;
  }
  if (value.length > LINE_BOUNDS.lines) {
    const message = `${thousands(value.length)} lignes, ${thousands(LINE_BOUNDS.lines)} au plus par commande`;
    errors.push({ field: 'lines', message });
    return undefined;
  }
  const before = errors.length;
  const lines: OrderLineRecord[] = [];
  const seen = new Map<string, number>();
  value.forEach((raw, k) => {
    const line = validateLine(raw, k, errors);
    if (line === undefined) return;
    const first = seen.get(line.line_id);
    if (first !== undefined) {
      const message = `line_id « ${shown(line.line_id)} » en double (déjà en lines[${first}])`;
      errors.push({ field: `lines[${k}].line_id`, message });
      return;
    }
    seen.set(line.line_id, k);
    lines.push(line);
  });
  return errors.length === before ? lines : undefined;
}

/** The field errors of line k (`lines[k]…`) name k: the CSV reader gives each its own row (L8). */
export function lineIndexOf(field: string): number | undefined {
  const m = /^lines\[(\d+)\]/.exec(field);
  return m ? Number(m[1]) : undefined;
}
