// HTML built with a tagged template that escapes every interpolated value, unless it is
// already Html (a fragment built the same way) — so request text can never become markup.
// Text shown as page content is also kept from steering the page's direction (issue 18, finding
// 7): a value with right-to-left letters or explicit direction controls is isolated in a <bdi>,
// and the controls themselves (U+202E…) are shown as their code point instead of being obeyed,
// so `‮gnp.exe` reads as it is stored, not « exe.png ». Values in attributes are left as they
// are (a form field gives back what it got).

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const escapeHtml = (value: string): string => value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

// Where a value lands: page content, text without markup (<title>, <option>), or as is
// (attributes, a <textarea>'s value).
type Place = 'content' | 'plain' | 'verbatim';

// Explicit direction controls: embeddings, overrides, isolates, their ends, and the marks.
const CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
// Right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko…, their presentation forms and
// supplementary blocks) or a control: what can reorder the text around a value.
const BIDI =
  /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe\u{10800}-\u{10fff}\u{1e800}-\u{1efff}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** Direction controls written out (`[U+202E]`), so that a value cannot reorder what follows it. */
export const shownControls = (text: string): string =>
  text.replace(CONTROLS, (c) => `[U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase()}]`);

/** Where the value after `before` (a template's literal text up to it) lands. */
function placeAfter(before: string): Place {
  const tagEnd = before.lastIndexOf('>');
  if (before.lastIndexOf('<') > tagEnd) return 'verbatim'; // inside a tag
  const since = before.slice(tagEnd + 1);
  // A fragment of attributes (html` aria-describedby="${id}-error"`): inside quotes, or after `=`.
  if ((since.match(/"/g)?.length ?? 0) % 2 === 1 || /=\s*$/.test(since)) return 'verbatim';
  const last = /<(\/?)([a-z]+)[^<]*$/i.exec(before);
  const element = last && !last[1] ? last[2]?.toLowerCase() : undefined;
  if (element === 'textarea') return 'verbatim';
  if (element === 'title' || element === 'option') return 'plain';
  return 'content';
}

// A template's places are worked out once per call site (the strings array is the same object).
const placesOf = new WeakMap<TemplateStringsArray, Place[]>();

function places(strings: TemplateStringsArray): Place[] {
  let found = placesOf.get(strings);
  if (!found) {
    found = [];
    for (let i = 1, before = strings[0] ?? ''; i < strings.length; before += `x${strings[i] ?? ''}`, i++)
      found.push(placeAfter(before));
    placesOf.set(strings, found);
  }
  return found;
}

function renderText(text: string, place: Place): string {
  if (place === 'verbatim' || !BIDI.test(text)) return escapeHtml(text);
  const shown = escapeHtml(shownControls(text));
  return place === 'content' ? `<bdi>${shown}</bdi>` : shown;
}

function render(value: HtmlValue, place: Place): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v, place)).join('');
  return typeof value === 'string' ? renderText(value, place) : escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  const at = places(strings);
  let out = strings[0] ?? '';
  values.forEach((value, i) => (out += render(value, at[i] ?? 'verbatim') + (strings[i + 1] ?? '')));
  return new Html(out);
}

/** Markup produced by our own code (an SVG chart), inserted as is. */
export const trusted = (markup: string): Html => new Html(markup);
