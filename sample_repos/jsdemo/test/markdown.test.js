import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import render, {
  escapeHtml, parseBlocks, renderInline, slugifyHeading, stripMarkdown, tableOfContents, wordCount,
} from '../src/markdown.js';

describe('inline markup', () => {
  test('escapeHtml escapes the five special characters', () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  test('renderInline handles code, strong, emphasis and links', () => {
    assert.equal(renderInline('use `npm` **now**, *really*'),
      'use <code>npm</code> <strong>now</strong>, <em>really</em>');
    assert.equal(renderInline('see [the docs](https://example.org/x)'),
      'see <a href="https://example.org/x">the docs</a>');
  });

  test('renderInline escapes before adding tags', () => {
    assert.equal(renderInline('a < b *and* c'), 'a &lt; b <em>and</em> c');
  });

  test('slugifyHeading drops punctuation and joins words with dashes', () => {
    assert.equal(slugifyHeading('  Hello, World: Part 2!  '), 'hello-world-part-2');
  });
});

describe('parseBlocks', () => {
  test('recognises headings with their level', () => {
    assert.deepEqual(parseBlocks('## Setup ##'), [{ type: 'heading', level: 2, text: 'Setup' }]);
  });

  test('joins the lines of a paragraph', () => {
    assert.deepEqual(parseBlocks('one\ntwo\n\nthree'), [
      { type: 'paragraph', text: 'one two' },
      { type: 'paragraph', text: 'three' },
    ]);
  });

  test('groups list items and tells ordered from bulleted', () => {
    assert.deepEqual(parseBlocks('- a\n* b\n1. c\n2) d'), [
      { type: 'list', ordered: false, items: ['a', 'b'] },
      { type: 'list', ordered: true, items: ['c', 'd'] },
    ]);
  });

  test('keeps fenced code verbatim with its language', () => {
    assert.deepEqual(parseBlocks('```py\n# not a heading\n- not a list\n```'), [
      { type: 'code', lang: 'py', text: '# not a heading\n- not a list' },
    ]);
  });

  test('parses block quotes recursively', () => {
    assert.deepEqual(parseBlocks('> # Title\n> body'), [
      { type: 'quote', children: [{ type: 'heading', level: 1, text: 'Title' }, { type: 'paragraph', text: 'body' }] },
    ]);
  });

  test('a paragraph stops at the start of another block', () => {
    assert.deepEqual(parseBlocks('text\n# Head\nmore\n- item').map((b) => b.type),
      ['paragraph', 'heading', 'paragraph', 'list']);
  });

  test('accepts Windows line endings', () => {
    assert.equal(parseBlocks('a\r\nb\r\n\r\nc').length, 2);
  });
});

describe('render', () => {
  test('renders every block type', () => {
    const html = render('# Title\n\nSome *text*.\n\n- one\n- two\n\n1. first\n\n> quoted\n\n```js\nlet x = 1 < 2;\n```');
    assert.equal(html, [
      '<h1>Title</h1>',
      '<p>Some <em>text</em>.</p>',
      '<ul><li>one</li><li>two</li></ul>',
      '<ol><li>first</li></ol>',
      '<blockquote><p>quoted</p></blockquote>',
      '<pre><code class="language-js">let x = 1 &lt; 2;</code></pre>',
    ].join('\n'));
  });

  test('adds heading ids on request', () => {
    assert.equal(render('## Getting Started', { headingIds: true }), '<h2 id="getting-started">Getting Started</h2>');
    assert.equal(render('## Getting Started'), '<h2>Getting Started</h2>');
  });

  test('code without a language has no class', () => {
    assert.equal(render('```\n<b>\n```'), '<pre><code>&lt;b&gt;</code></pre>');
  });

  test('renders an empty document as an empty string', () => {
    assert.equal(render('\n\n'), '');
  });
});

describe('tableOfContents', () => {
  test('lists headings down to the level with unique slugs', () => {
    const source = '# Intro\n## Usage\n#### Deep\n## Usage\ntext';
    assert.deepEqual(tableOfContents(source), [
      { level: 1, text: 'Intro', slug: 'intro' },
      { level: 2, text: 'Usage', slug: 'usage' },
      { level: 2, text: 'Usage', slug: 'usage-1' },
    ]);
    assert.equal(tableOfContents(source, 4).length, 4);
  });
});

describe('plain text', () => {
  test('stripMarkdown removes markup and keeps the words', () => {
    assert.equal(stripMarkdown('# A **bold** [link](http://x)\n\n- `one`\n- two\n\n> *quoted*\n\n```\ncode\n```'),
      'A bold link\n\none\ntwo\n\nquoted\n\ncode');
  });

  test('wordCount counts the words of the plain text', () => {
    assert.equal(wordCount('# Hello world\n\nThis is **markdown**.'), 5);
    assert.equal(wordCount('  \n'), 0);
  });
});
