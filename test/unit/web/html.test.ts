import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, html, Html, trusted } from '../../../src/web/html.js';
import { productsChartSvg } from '../../../src/web/products-chart.js';

test('every interpolated string is escaped: the five characters that can open markup or leave an attribute', () => {
  const hostile = `<script>alert("x")</script>' onmouseover='y' & "z"`;
  const out = html`<p title="${hostile}">${hostile}</p>`.text;
  assert.doesNotMatch(out, /<script>/);
  assert.equal(
    out,
    '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;y&#39; &amp; &quot;z&quot;">' +
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; onmouseover=&#39;y&#39; &amp; &quot;z&quot;</p>',
  );
  assert.equal(escapeHtml('&amp;'), '&amp;amp;', 'already-escaped text is escaped again, never trusted');
});

test('a fragment built with html`` is inserted as is, once; arrays are joined; null, undefined and booleans vanish', () => {
  const item = (name: string) => html`<li>${name}</li>`;
  // prettier-ignore
  const out = html`<ul>${['a<b', 'c'].map(item)}</ul>${null}${undefined}${false}${true}${0}`;
  assert.ok(out instanceof Html);
  assert.equal(out.text, '<ul><li>a&lt;b</li><li>c</li></ul>0');
  assert.equal(String(out), out.text);
});

test('an object that merely looks like Html (a text property) is escaped as a string', () => {
  const lookalike = { text: '<b>bold</b>', toString: () => '<b>bold</b>' } as unknown as string;
  assert.equal(html`${lookalike}`.text, '&lt;b&gt;bold&lt;/b&gt;');
});

test('trusted() is the only way to insert raw markup', () => {
  assert.equal(html`<div>${trusted('<svg></svg>')}</div>`.text, '<div><svg></svg></div>');
});

test('finding 7: a value with right-to-left text or direction controls is isolated in page content, its controls shown', () => {
  const spoofed = '\u202egnp.exe';
  assert.equal(html`<td>${spoofed}</td>`.text, '<td><bdi>[U+202E]gnp.exe</bdi></td>');
  assert.equal(html`<span>${'שלום <b>'}</span> suite`.text, '<span><bdi>שלום &lt;b&gt;</bdi></span> suite');
  assert.equal(html`<td>${'completed'}</td>`.text, '<td>completed</td>', 'left-to-right text as before');
  // Text without markup: the controls shown, no element.
  assert.equal(html`<title>${spoofed} · x</title>`.text, '<title>[U+202E]gnp.exe · x</title>');
  assert.equal(
    html`<option value="a">${spoofed}</option>`.text,
    '<option value="a">[U+202E]gnp.exe</option>',
  );
});

test('finding 7: values in attributes, attribute fragments and a textarea are given back as they are', () => {
  const spoofed = '\u202egnp.exe';
  assert.equal(html`<input value="${spoofed}" />`.text, `<input value="${spoofed}" />`);
  assert.equal(html` aria-describedby="${spoofed}-error"`.text, ` aria-describedby="${spoofed}-error"`);
  assert.equal(html` data-x=${spoofed}`.text, ` data-x=${spoofed}`);
  assert.equal(
    html`<textarea name="t">${spoofed}</textarea>`.text,
    `<textarea name="t">${spoofed}</textarea>`,
  );
  const attributes = html`value="${spoofed}"`;
  assert.equal(html`<input ${attributes} />`.text, `<input value="${spoofed}" />`);
});

test('finding 7, issue 27: the Produits chart shows a name’s direction controls as the table does, in its drawing and text alternative', () => {
  const bars = [
    { label: '\u202egnp.exe', value: 10 },
    { label: 'Thé', value: 5 },
  ];
  const svg = productsChartSvg(bars, { period: 'du 1er au 31 mars 2026', per: 'produit', money: String });
  assert.ok(!/[\u202a-\u202e\u2066-\u2069]/.test(svg), 'no raw direction control in the SVG');
  assert.match(svg, /aria-label="[^"]*1\. \[U\+202E\]gnp\.exe : 10 ; 2\. Thé : 5\."/);
  assert.match(svg, /<text x="0" y="37" fill="#111827">\[U\+202E\]gnp\.exe<\/text>/);
});
