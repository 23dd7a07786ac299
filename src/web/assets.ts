// The stylesheet and the small script of the web pages (no build step, no framework).

export const APP_CSS = `
:root { --ink:#1d2430; --muted:#5b6575; --line:#d9dee6; --bg:#f6f7f9; --accent:#2452c9; --danger:#b42318; --ok:#137333; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
* { box-sizing: border-box; }
/* Issue 18, finding 7: a long value without spaces (a status, an address, a name) wraps
   anywhere rather than widening the page. */
body { margin: 0; overflow-wrap: anywhere; }
a { color: var(--accent); }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; padding: .75rem 1.25rem; background: #fff; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; color: var(--ink); text-decoration: none; }
.top nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
.top nav a { text-decoration: none; padding: .25rem 0; }
.top nav a[aria-current=page] { font-weight: 600; border-bottom: 2px solid var(--accent); }
.account { margin-left: auto; display: flex; flex-wrap: wrap; align-items: center; gap: .75rem; color: var(--muted); font-size: .9rem; }
main { max-width: 1100px; margin: 0 auto; padding: 1.25rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
.card { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
.narrow { max-width: 420px; margin: 2rem auto; }
label { display: block; font-weight: 600; margin: .75rem 0 .25rem; }
input[type=text], input[type=email], input[type=password], input[type=url], input[type=file], select { font: inherit; padding: .5rem .6rem; border: 1px solid var(--line); border-radius: 6px; width: 100%; max-width: 420px; background: #fff; }
input:focus-visible, select:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid #9db7ff; outline-offset: 1px; }
button, .button { font: inherit; padding: .5rem 1rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; display: inline-block; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); }
button.danger, .button.danger { background: #fff; color: var(--danger); border-color: var(--danger); }
button.link { background: none; border: none; color: var(--accent); padding: 0; text-decoration: underline; }
.inline { display: inline; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: 1rem; align-items: center; }
.error { color: var(--danger); font-size: .9rem; margin: .25rem 0 0; }
.notice { background: #e7f3ea; border: 1px solid #b7dcc2; color: var(--ok); padding: .6rem .9rem; border-radius: 6px; }
.alert { background: #fdecea; border: 1px solid #f5c2bd; color: var(--danger); padding: .6rem .9rem; border-radius: 6px; }
.table-wrap { overflow-x: auto; position: relative; }
table { border-collapse: collapse; width: 100%; background: #fff; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: .5rem .6rem; border-bottom: 1px solid var(--line); white-space: nowrap; }
/* Figures and headings stay on one line; a value (a key's name, an address) wraps in its cell
   rather than pushing the row's other columns out of sight (finding 7). */
td { white-space: normal; }
button, .button, td code { white-space: nowrap; overflow-wrap: normal; }
td.num, th.num { text-align: right; white-space: nowrap; }
tfoot td { font-weight: 700; border-top: 2px solid var(--ink); }
code.key { display: block; padding: .75rem; background: #fff8e1; border: 1px dashed #e0b400; border-radius: 6px; word-break: break-all; font-size: 1rem; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: .75rem 0; padding: .5rem 1rem; }
fieldset label { display: flex; gap: .5rem; align-items: center; font-weight: 400; margin: .35rem 0; }
dialog { border: 1px solid var(--line); border-radius: 8px; max-width: 520px; width: calc(100% - 2rem); }
dialog::backdrop { background: rgba(20, 25, 35, .45); }
/* A dialog opened by the server (no script yet) stands in the page flow instead of over it. */
dialog[open]:not(:modal) { position: static; margin: 0 0 1rem; width: 100%; max-width: none; }
.muted { color: var(--muted); }
/* Connected stores: long states and addresses wrap, the actions stack, nothing scrolls away. */
table.connections td { white-space: normal; vertical-align: top; }
table.connections td:first-child { overflow-wrap: anywhere; min-width: 10rem; }
table.connections td:nth-child(2) { min-width: 14rem; }
table.connections form { display: block; margin: 0 0 .4rem; }
table.connections progress { display: block; width: 100%; max-width: 16rem; }
.chart svg { width: 100%; height: auto; }
/* The « Produits » page: bars drawn in percentages of the card's width, text at its own size;
   the table's headers are links that sort by their column. */
.chart svg.bars { overflow: visible; }
table.data-table th a.sort { color: inherit; text-decoration: none; }
#products-table thead th, #products-table th[scope=row] { white-space: normal; }
#products-table thead th { overflow-wrap: normal; }
#products-table .then { white-space: normal; }
#products-table th[scope=row] { min-width: 9rem; }
table.data-table th a.sort:hover, table.data-table th a.sort:focus-visible { text-decoration: underline; }
/* Revenue page, key figures and PC1 changes: colour plus an arrow and a sign, never colour alone. */
.figures { display: grid; grid-template-columns: repeat(auto-fit, minmax(9.5rem, 1fr)); gap: .75rem 1rem; margin: 0; }
.figures dt { color: var(--muted); font-size: .9rem; }
.figures dd { margin: 0; }
.figures .value { font-size: clamp(1.1rem, 4.6vw, 1.35rem); font-weight: 700; font-variant-numeric: tabular-nums; }
.figures .previous { color: var(--muted); font-size: .85rem; }
.change { white-space: nowrap; font-variant-numeric: tabular-nums; }
.change.up { color: var(--ok); }
.change.down { color: var(--danger); }
.change.cost.up { color: var(--danger); }
.change.cost.down { color: var(--ok); }
td.previous { color: var(--muted); }
/* The Revenue page's period: fields side by side, aligned at the top whatever error one shows
   (issue 30, item 9); the button level with the inputs. */
.period-form { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: flex-start; }
.period-form > div { flex: 1 1 9rem; }
.period-form > div:has(select) { flex: 1 1 13rem; }
.period-form > .submit { flex: 0 0 auto; padding-top: calc(.75rem + 1.2em + .25rem); }
.period-form > p { flex-basis: 100%; margin-bottom: 0; }
.period-form label { line-height: 1.2; }
.empty h2 { margin-top: 0; }
.table-title { font-size: 1.1rem; margin: 0 0 .5rem; }
.downloads { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .75rem; }
.downloads p { flex-basis: 100%; margin: .25rem 0 0; font-size: .9rem; }
/* Tables of figures (data-table.ts, issue 30, item 1): the headline column in bold, a compared
   cell as its value over its change and the comparison's value. */
table.data-table th, table.data-table td { vertical-align: top; }
table.data-table .lead { font-weight: 700; }
table.data-table [hidden] { display: none; }
table.data-table .now, table.data-table .then, .compared-to { display: block; }
table.data-table .then, .compared-to { font-size: .8rem; font-weight: 400; color: var(--muted); white-space: nowrap; }
table.data-table .then .change { margin-right: .35rem; }
table.data-table tfoot th, table.data-table tfoot td { border-top: 2px solid var(--ink); font-weight: 700; }
.column-picker { margin: 0 0 .5rem; }
.column-picker summary { cursor: pointer; color: var(--accent); }
.column-picker fieldset { display: flex; flex-wrap: wrap; gap: 0 1.25rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; }
@media (max-width: 640px) {
  .account { margin-left: 0; width: 100%; } main { padding: .75rem; } th, td { padding: .4rem; }
  /* Tables of records become one card per row, each value under its column's name. */
  table.stack thead { display: none; }
  table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: .5rem 0; }
  table.stack td { display: flex; justify-content: space-between; gap: 1rem; border: none; white-space: normal; }
  table.stack td[data-label]::before { content: attr(data-label); font-weight: 600; color: var(--muted); }
  /* Tables of figures: one card per row (a day, a product), its figures under it, label left and
     value right; nothing wider than the phone. */
  table.data-table thead { display: none; }
  table.data-table, table.data-table tbody, table.data-table tfoot, table.data-table tr { display: block; }
  table.data-table tr { border-bottom: 1px solid var(--line); padding: .35rem 0; }
  table.data-table th[scope=row] { display: block; border: none; padding-bottom: .15rem; }
  table.data-table td { display: flex; justify-content: space-between; gap: 1rem; border: none; padding: .15rem .4rem; }
  table.data-table td[hidden] { display: none; }
  table.data-table td::before { content: attr(data-label); color: var(--muted); font-weight: 600; text-align: left; }
  table.data-table td.lead::before { color: var(--ink); }
  table.data-table td.num .cell { text-align: right; }
  table.data-table tfoot tr { border-top: 2px solid var(--ink); }
  table.data-table tfoot th, table.data-table tfoot td { border-top: none; }
}
`;

// Progressive enhancement only: every form also works without it.
export const APP_JS = `
const importForm = document.getElementById('import-form');
if (importForm) importForm.addEventListener('submit', (event) => {
  // Upload with a progress bar, then on to the import's page (or the error page the server sent).
  event.preventDefault();
  const bar = document.getElementById('import-progress');
  bar.hidden = false;
  const request = new XMLHttpRequest();
  request.upload.addEventListener('progress', (e) => { if (e.lengthComputable) bar.value = Math.round((e.loaded / e.total) * 100); });
  request.addEventListener('load', () => {
    if (request.responseURL.includes('/settings/stores/imports/')) { location.assign(request.responseURL); return; }
    document.open(); document.write(request.responseText); document.close();
  });
  request.open('POST', importForm.action);
  request.send(new FormData(importForm));
});
// No inline handlers: the Content-Security-Policy allows scripts from this file only.
document.addEventListener('change', (event) => {
  if (event.target.matches('select[data-autosubmit]')) event.target.form.requestSubmit();
});
// Connected stores: the table is fetched again every few seconds while a sync runs.
const connections = document.getElementById('connections');
if (connections) {
  const refresh = () => {
    const current = document.getElementById('connections');
    if (!current || current.dataset.active !== '1') return;
    fetch(current.dataset.refresh, { credentials: 'same-origin' })
      .then((response) => (response.ok ? response.text() : Promise.reject(response.status)))
      .then((text) => {
        const next = new DOMParser().parseFromString(text, 'text/html').getElementById('connections');
        if (next) current.replaceWith(document.importNode(next, true));
      })
      .catch(() => undefined);
  };
  setInterval(refresh, 3000);
}
// Tables of figures: the column picker (data-table.ts) shows the columns ticked, remembered per table.
document.querySelectorAll('details[data-columns-for]').forEach((picker) => {
  const table = document.getElementById(picker.dataset.columnsFor);
  if (!table) return;
  const key = 'columns:' + table.id;
  const boxes = [...picker.querySelectorAll('input[type=checkbox]')];
  let saved = null;
  try { saved = JSON.parse(localStorage.getItem(key) || 'null'); } catch { saved = null; }
  if (Array.isArray(saved)) boxes.forEach((box) => { if (!box.disabled) box.checked = saved.includes(box.value); });
  const apply = () => {
    const shown = new Set(boxes.filter((box) => box.checked).map((box) => box.value));
    table.querySelectorAll('[data-col]').forEach((cell) => { cell.hidden = !shown.has(cell.dataset.col); });
    picker.querySelector('summary').textContent = 'Colonnes (' + shown.size + ' sur ' + boxes.length + ')';
    return [...shown];
  };
  picker.addEventListener('change', () => {
    const shown = apply();
    try { localStorage.setItem(key, JSON.stringify(shown)); } catch { /* private browsing */ }
  });
  apply();
  picker.hidden = false;
});
document.querySelectorAll('dialog[open][data-modal]').forEach((dialog) => { dialog.close(); dialog.showModal(); });
document.addEventListener('click', (event) => {
  const copy = event.target.closest('[data-copy]');
  if (copy) {
    const text = document.getElementById(copy.dataset.copy).textContent.trim();
    navigator.clipboard.writeText(text).then(() => { copy.textContent = 'Copiée ✓'; });
  }
  const opener = event.target.closest('[data-dialog]');
  if (opener) { event.preventDefault(); document.getElementById(opener.dataset.dialog).showModal(); }
  const closer = event.target.closest('[data-close]');
  if (closer) { event.preventDefault(); closer.closest('dialog').close(); }
});
`;
