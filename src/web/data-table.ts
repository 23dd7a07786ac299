// A table of figures that fits its box (issue 30, item 1), for the Revenue page and the pages of
// the same kind to come (« Produits »): a row header (a day, a product), figure columns in order of
// importance, a total row. The columns a reader does not need first are `optional`: the page's
// script offers a picker (« Colonnes ») and hides them until ticked; without the script every
// column shows and the table scrolls inside its own box, never the page. Below 640 px each row
// becomes a card, each value under its column's name (assets.ts, `table.data-table`).
import { joinInSlices, TimeSlices } from '../limits/time-slice.js';
import { html, Html, type HtmlValue } from './html.js';

export interface DataColumn<Row> {
  /** Stable id: the picker's value and the cells' `data-col`. */
  readonly id: string;
  readonly label: string;
  /** Hidden until picked (the script); the first columns a reader needs are not optional. */
  readonly optional?: boolean;
  /** Right-aligned figures. */
  readonly numeric?: boolean;
  /** The headline figure: first, and in bold. */
  readonly lead?: boolean;
  /** The header's content when it is more than the label (a link that sorts by the column). */
  readonly heading?: HtmlValue;
  /** The table is sorted by this column (aria-sort). */
  readonly sorted?: 'ascending' | 'descending';
  readonly cell: (row: Row) => HtmlValue;
}

export interface DataTable<Row> {
  readonly id: string;
  /** Said to screen readers and shown above the table. */
  readonly caption: string;
  readonly rowHeader: {
    readonly label: string;
    readonly heading?: HtmlValue;
    readonly sorted?: 'ascending' | 'descending';
    readonly cell: (row: Row) => HtmlValue;
  };
  readonly columns: readonly DataColumn<Row>[];
  readonly rows: readonly Row[];
  readonly rowAttributes?: (row: Row) => Html;
  /** The total row: its header text and its values. */
  readonly totals?: { readonly id: string; readonly label: HtmlValue; readonly row: Row };
  /** A class for the table beside `data-table` (e.g. `compared`). */
  readonly variant?: string;
}

const columnClass = (c: DataColumn<never>): string =>
  [c.numeric ? 'num' : '', c.lead ? 'lead' : ''].filter(Boolean).join(' ');

function cells<Row>(table: DataTable<Row>, row: Row): Html {
  // One line per cell, no indentation: a table may have 731 rows (P4's two years of days).
  // prettier-ignore
  return html`${table.columns.map((c) => html`<td class="${columnClass(c)}" data-col="${c.id}" data-label="${c.label}"${c.optional ? html` data-optional` : ''}><span class="cell">${c.cell(row)}</span></td>`)}`;
}

/** The picker of optional columns: shown by the script only (it is what makes it work). */
function columnPicker<Row>(table: DataTable<Row>): Html {
  const optional = table.columns.filter((c) => c.optional);
  if (optional.length === 0) return html``;
  return html`<details class="column-picker" data-columns-for="${table.id}" hidden>
    <summary>Colonnes (${table.columns.length - optional.length} sur ${table.columns.length})</summary>
    <fieldset>
      <legend class="visually-hidden">Colonnes affichées</legend>
      ${table.columns.map(
        (c) =>
          html`<label
            ><input
              type="checkbox"
              value="${c.id}"
              ${c.optional ? '' : html`checked`}
              ${c.id === table.columns[0]?.id ? html`disabled` : ''}
            />
            ${c.label}</label
          >`,
      )}
    </fieldset>
  </details>`;
}

/** One body row: its header cell, then its figures. */
function rowHtml<Row>(table: DataTable<Row>, row: Row): Html {
  // The same markup, to the byte, as when the rows were written inside the table's template.
  // prettier-ignore
  return html`<tr ${table.rowAttributes?.(row) ?? ''}>
                <th scope="row">${table.rowHeader.cell(row)}</th>
                ${cells(table, row)}
              </tr>`;
}

function* rowTexts<Row>(table: DataTable<Row>): Generator<string> {
  for (const row of table.rows) yield rowHtml(table, row).text;
}

/** The table around its body rows, already written. */
const ariaSort = (sorted: 'ascending' | 'descending' | undefined): Html =>
  sorted ? html`aria-sort="${sorted}"` : html``;

function tableHtml<Row>(table: DataTable<Row>, body: Html): Html {
  const { rowHeader } = table;
  const header = html`<th scope="col" ${ariaSort(rowHeader.sorted)}>
      ${rowHeader.heading ?? rowHeader.label}
    </th>
    ${table.columns.map(
      (c) =>
        html`<th
          scope="col"
          class="${columnClass(c)}"
          data-col="${c.id}"
          ${c.optional ? html`data-optional` : ''}
          ${ariaSort(c.sorted)}
        >
          ${c.heading ?? c.label}
        </th>`,
    )}`;
  return html`${columnPicker(table)}
    <div class="table-wrap">
      <table id="${table.id}" class="data-table ${table.variant ?? ''}">
        <caption class="visually-hidden">
          ${table.caption}
        </caption>
        <thead>
          <tr>
            ${header}
          </tr>
        </thead>
        <tbody>
          ${body}
        </tbody>
        ${
          table.totals
            ? html`<tfoot>
                <tr id="${table.totals.id}">
                  <th scope="row">${table.totals.label}</th>
                  ${cells(table, table.totals.row)}
                </tr>
              </tfoot>`
            : ''
        }
      </table>
    </div>`;
}

/** The table in one go: for tables of a few dozen rows (a page's latest imports). */
export function dataTableHtml<Row>(table: DataTable<Row>): Html {
  return tableHtml(table, new Html([...rowTexts(table)].join('')));
}

/**
 * The same table, to the byte, its rows written in time slices (issue 26, item 6): for tables
 * that may have hundreds of rows (731 days of P4's two years, a shop's products), so that the
 * page never holds the event loop for the whole of it. `slices` is the request's own, when it
 * already has some.
 */
export async function dataTableHtmlInSlices<Row>(
  table: DataTable<Row>,
  slices: TimeSlices = new TimeSlices(),
): Promise<Html> {
  return tableHtml(table, new Html(await joinInSlices(rowTexts(table), slices)));
}
