// What the « Produits » page is asked for: the period (P3, P4), the grouping, « Comparer à » (PC1:
// the previous period or the same period a year earlier, resolved by the API's own code) and the
// order (L7). Each problem is a French sentence shown next to its field; a value is never shown
// back. The same rules as the Revenue page's form (revenue-page.ts), with a grouping and an order.
import {
  isProductGroup,
  isProductMetric,
  TOP_SELLERS,
  type ProductGroup,
  type ProductsChoice,
  type ProductSort,
} from '../metrics/products.js';
import { chosenComparison, chosenPeriod, type CompareChoice } from './period-choice.js';

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

export function productsChoice(query: Record<string, string | undefined>): ProductsForm {
  const period = chosenPeriod(query);
  const group = parseGroup(query.group);
  const sort = parseSort(query.sort);
  const { error: compareError, ...compared } = chosenComparison(query.compare, period);
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
