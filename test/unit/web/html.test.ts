import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, html, Html, trusted } from '../../../src/web/html.js';

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
