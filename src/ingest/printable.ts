// Characters a file may send that no text column can keep (finding 3 and 6 of issue 18): the NUL
// character (PostgreSQL text and jsonb strings cannot hold it; a message quoting one made the job
// row's update fail), and a lone UTF-16 surrogate (`"\ud800"` in JSON, stored as U+FFFD without a
// word). Lines holding either are refused; messages that quote a line show them harmlessly.

/** Why a field (or line) holding a NUL character is refused. */
export const NUL_REFUSED = 'caractère nul (U+0000) interdit : la base de données ne peut pas le garder';

/** Why a text holding half of a UTF-16 surrogate pair is refused. */
export const SURROGATE_REFUSED =
  'caractère invalide : moitié de paire UTF-16 isolée (\\ud800–\\udfff), ce n’est pas du texte Unicode';

/** A text quoted in a message or a job row: NUL shown as ␀, a lone surrogate as U+FFFD. */
export function printable(text: string): string {
  const visible = text.includes('\u0000') ? text.replaceAll('\u0000', '\u2400') : text;
  return visible.isWellFormed() ? visible : visible.toWellFormed();
}
