// HTML built with a tagged template that escapes every interpolated value, unless it is
// already Html (a fragment built the same way) — so request text can never become markup.

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

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false || value === true) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map((v: HtmlValue) => render(v)).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => (out += render(value) + (strings[i + 1] ?? '')));
  return new Html(out);
}

/** Markup produced by our own code (an SVG chart), inserted as is. */
export const trusted = (markup: string): Html => new Html(markup);
