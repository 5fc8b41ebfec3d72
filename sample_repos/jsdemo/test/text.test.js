import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  capitalize, dedent, pluralize, splitWords, template, toCamel, toKebab, truncate, wrap,
} from '../src/text.js';

describe('capitalize and pluralize', () => {
  test('capitalize upper-cases the first letter only', () => {
    assert.equal(capitalize('hello world'), 'Hello world');
    assert.equal(capitalize(''), '');
  });

  test('pluralize picks the form by count', () => {
    assert.equal(pluralize(1, 'file'), '1 file');
    assert.equal(pluralize(3, 'file'), '3 files');
    assert.equal(pluralize(0, 'child', 'children'), '0 children');
  });
});

describe('wrap', () => {
  test('breaks between words at the width', () => {
    assert.deepEqual(wrap('the quick brown fox jumps over the lazy dog', 10), [
      'the quick', 'brown fox', 'jumps over', 'the lazy', 'dog',
    ]);
  });

  test('keeps a word longer than the width on its own line', () => {
    assert.deepEqual(wrap('a supercalifragilistic word', 5), ['a', 'supercalifragilistic', 'word']);
  });

  test('collapses whitespace and returns no lines for blank text', () => {
    assert.deepEqual(wrap('  one \n two  ', 80), ['one two']);
    assert.deepEqual(wrap('   ', 80), []);
  });

  test('rejects a width below one', () => {
    assert.throws(() => wrap('text', 0), RangeError);
  });
});

describe('truncate', () => {
  test('leaves short text alone', () => {
    assert.equal(truncate('short', 10), 'short');
  });

  test('cuts to the limit, ellipsis included', () => {
    const cut = truncate('The quick brown fox', 10);
    assert.equal(cut, 'The quick…');
    assert.equal(cut.length, 10);
  });

  test('can cut at a word boundary with a custom ellipsis', () => {
    assert.equal(truncate('The quick brown fox', 12, { wholeWords: true, ellipsis: '...' }), 'The quick...');
    assert.equal(truncate('The quick brown fox', 14, { wholeWords: true, ellipsis: '...' }), 'The quick...');
    assert.equal(truncate('The quick brown fox', 14, { ellipsis: '...' }), 'The quick b...');
  });
});

describe('template', () => {
  test('fills names and dotted paths', () => {
    assert.equal(template('Hi {name}, you have {inbox.count} messages', { name: 'Ada', inbox: { count: 3 } }),
      'Hi Ada, you have 3 messages');
  });

  test('leaves unknown placeholders untouched', () => {
    assert.equal(template('{known} {unknown} {a.b.c}', { known: 0 }), '0 {unknown} {a.b.c}');
  });
});

describe('dedent', () => {
  test('removes the common indentation and the first newline', () => {
    const text = dedent(`
      def f():
          return 1
    `);
    assert.equal(text, 'def f():\n    return 1');
  });

  test('ignores blank lines when measuring', () => {
    assert.equal(dedent('    a\n\n      b'), 'a\n\n  b');
  });
});

describe('case conversion', () => {
  test('splitWords understands camel, snake, kebab and acronyms', () => {
    assert.deepEqual(splitWords('parseHTTPResponse'), ['parse', 'http', 'response']);
    assert.deepEqual(splitWords('snake_case-and kebab'), ['snake', 'case', 'and', 'kebab']);
  });

  test('toCamel and toKebab', () => {
    assert.equal(toCamel('user_account-id'), 'userAccountId');
    assert.equal(toKebab('XMLHttpRequest'), 'xml-http-request');
  });
});
