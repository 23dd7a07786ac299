// The period (P3, P4) and « Comparer à » (PC1) of a report page's form, shared by the Revenue and
// « Produits » pages so that both read them with the API's own rules and say the same French
// sentence next to the field at fault. A value typed by the user is never shown back.
import { isAppError } from '../errors.js';
import { resolveComparison, type Comparison } from '../query/compare.js';
import { isPeriodProblem, requirePeriod, resolvePeriod } from '../query/period.js';
import { dayFromField, spreadsheetDate } from './format.js';
import { html, type Html } from './html.js';
import { field } from './layout.js';

/** The pages' choices of « Comparer à »: PC1's modes but `custom`, which the pages do not offer. */
export const COMPARISONS = [
  { value: '', option: 'Aucune' },
  { value: 'previous_period', option: 'Période précédente' },
  { value: 'previous_year', option: 'Même période l’an dernier' },
] as const;
export type CompareChoice = (typeof COMPARISONS)[number]['value'];

export interface ChosenPeriod {
  readonly from: string;
  readonly to: string;
  readonly errors: { readonly from?: string; readonly to?: string };
}

export interface ChosenComparison {
  readonly compare: CompareChoice;
  /** The comparison period, when one is chosen and the period is valid. */
  readonly comparison?: Comparison;
  readonly error?: string;
}

/**
 * P3, P4 as the API reads them, from days typed the French way (jj/mm/aaaa) or the API's way
 * (links); an emptied date field means the default.
 */
export function chosenPeriod(query: Record<string, string | undefined>): ChosenPeriod {
  const typed = (text: string | undefined) => (text ? dayFromField(text) || undefined : undefined);
  const result = resolvePeriod(typed(query.from), typed(query.to));
  if (!isPeriodProblem(result)) return { ...result, errors: {} };
  if (result.problem === 'from-after-to')
    return {
      from: result.from,
      to: result.to,
      errors: { from: 'La date de début est après la date de fin.' },
    };
  const fallback = requirePeriod(undefined, undefined); // the defaults cannot be wrong
  return {
    ...fallback,
    errors: { [result.parameter]: 'Date invalide : écrivez-la jj/mm/aaaa, par exemple 09/03/2026.' },
  };
}

/** PC1's comparison period for the page's choice, resolved as the API resolves `compare`. */
export function chosenComparison(text: string | undefined, period: ChosenPeriod): ChosenComparison {
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

/**
 * A period field (« Du », « Au »): a text field showing the day as the French write it, whatever
 * the browser's language (Chromium draws its own date field in the system's language: 03/09/2026
 * for the 9th of March on an English system, which a French reader takes for the 3rd of September).
 */
export function dayField(id: 'from' | 'to', label: string, day: string, error: string | undefined): Html {
  return field({
    id,
    label,
    type: 'text',
    value: spreadsheetDate(day),
    ...(error ? { error } : {}),
    attributes: html`inputmode="numeric" autocomplete="off" maxlength="10" placeholder="jj/mm/aaaa"`,
  });
}
