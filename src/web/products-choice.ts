// What the « Produits » page is asked for: the period (P3, P4), the grouping, « Comparer à » (PC1:
// the previous period or the same period a year earlier, resolved by the API's own code) and the
// order (L7). Each problem is a French sentence shown next to its field; a value is never shown
// back. The same rules as the Revenue page's form (revenue-page.ts), with a grouping and an order.
import { isAppError } from '../errors.js';
import {
  isProductGroup,
  isProductMetric,
  TOP_SELLERS,
  type ProductGroup,
  type ProductsChoice,
  type ProductSort,
} from '../metrics/products.js';
import { resolveComparison } from '../query/compare.js';
import { isPeriodProblem, requirePeriod, resolvePeriod } from '../query/period.js';

/** The page's choices of « Comparer à » (PC1's modes but `custom`, as on the Revenue page). */
export const COMPARISONS = [
  { value: '', option: 'Aucune' },
  { value: 'previous_period', option: 'Période précédente' },
  { value: 'previous_year', option: 'Même période l’an dernier' },
] as const;
export type CompareChoice = (typeof COMPARISONS)[number]['value'];

export type ChoiceErrors = Partial<Record<'from' | 'to' | 'group' | 'compare' | 'sort', string>>;

/** The choice as the form shows it back, with its problems. */
export interface ProductsForm extends ProductsChoice {
  readonly compare: CompareChoice;
  readonly errors: ChoiceErrors;
}

/** The page's `sort`: `-units_sold` (descending), `name`, `-name`…; the default is the top sellers. */
export function sortText(sort: ProductSort): string {
  return `${sort.descending ? '-' : ''}${sort.key}`;
}

function parseSort(text: string | undefined): { sort: ProductSort; error?: string } {
  if (!text) return { sort: TOP_SELLERS };
  const descending = text.startsWith('-');
  const key = descending ? text.slice(1) : text;
  if (key === 'name' || isProductMetric(key)) return { sort: { key, descending } };
  return { sort: TOP_SELLERS, error: 'Tri invalide : choisissez une colonne de la liste.' };
}

function parseGroup(text: string | undefined): { group: ProductGroup; error?: string } {
  if (!text) return { group: 'product' };
  if (isProductGroup(text)) return { group: text };
  return { group: 'product', error: 'Regroupement invalide : produit, variante, SKU ou catégorie.' };
}

/** P3, P4 as the API reads them; an emptied date field means the default. */
function parsePeriod(query: Record<string, string | undefined>): {
  from: string;
  to: string;
  errors: ChoiceErrors;
} {
  const result = resolvePeriod(query.from || undefined, query.to || undefined);
  if (!isPeriodProblem(result)) return { ...result, errors: {} };
  if (result.problem === 'from-after-to')
    return {
      from: result.from,
      to: result.to,
      errors: { from: 'La date de début est après la date de fin.' },
    };
  const fallback = requirePeriod(undefined, undefined); // the defaults cannot be wrong
  return { ...fallback, errors: { [result.parameter]: 'Date invalide (AAAA-MM-JJ).' } };
}

/** PC1's comparison period for the page's choice, or the reason it has none. */
function parseCompare(
  text: string | undefined,
  period: { from: string; to: string; errors: ChoiceErrors },
): { compare: CompareChoice; comparison?: ProductsChoice['comparison']; error?: string } {
  const picked = COMPARISONS.find((c) => c.value === (text ?? ''));
  if (picked === undefined)
    return {
      compare: '',
      error: 'Comparaison invalide : aucune, période précédente ou même période l’an dernier.',
    };
  if (picked.value === '' || period.errors.from || period.errors.to) return { compare: picked.value };
  try {
    const comparison = resolveComparison({ compare: picked.value }, period);
    return { compare: picked.value, ...(comparison ? { comparison } : {}) };
  } catch (error) {
    if (!isAppError(error)) throw error;
    // The only refusal left for these two modes: a comparison before the first day (P3).
    return {
      compare: picked.value,
      error:
        'La période de comparaison commencerait avant le 1er janvier de l’an 1 : choisissez un début plus tardif.',
    };
  }
}

export function productsChoice(query: Record<string, string | undefined>): ProductsForm {
  const period = parsePeriod(query);
  const group = parseGroup(query.group);
  const sort = parseSort(query.sort);
  const { error: compareError, ...compared } = parseCompare(query.compare, period);
  const errors: ChoiceErrors = { ...period.errors };
  if (group.error) errors.group = group.error;
  if (sort.error) errors.sort = sort.error;
  if (compareError) errors.compare = compareError;
  return { from: period.from, to: period.to, group: group.group, sort: sort.sort, ...compared, errors };
}

export const hasErrors = (form: ProductsForm): boolean => Object.values(form.errors).some(Boolean);

/** The page's own address for a choice (CSV links, sort links): each value encoded. */
export function productsAddress(path: string, form: ProductsForm, sort = form.sort): string {
  const query = new URLSearchParams({ from: form.from, to: form.to, group: form.group });
  if (form.compare) query.set('compare', form.compare);
  if (sortText(sort) !== sortText(TOP_SELLERS)) query.set('sort', sortText(sort));
  return `${path}?${query.toString()}`;
}
