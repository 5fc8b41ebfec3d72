import { describe, expect, it } from 'vitest';

import { getParam, parseQuery, splitKey, stringifyQuery } from '../src/query.js';

describe('splitKey', () => {
  it('splits bracketed keys', () => {
    expect(splitKey('a')).toEqual(['a']);
    expect(splitKey('a[b][c]')).toEqual(['a', 'b', 'c']);
    expect(splitKey('list[]')).toEqual(['list', '']);
  });

  it('keeps what is past the depth or malformed as one part', () => {
    expect(splitKey('a[b][c][d]', 2)).toEqual(['a', 'b', 'c', '[d]']);
    expect(splitKey('a[b]x[c]')).toEqual(['a', 'b', 'x[c]']);
  });
});

describe('parseQuery', () => {
  it('parses flat pairs, decoding + and percent escapes', () => {
    expect(parseQuery('?q=hello+world&lang=en&x=%E2%9C%93')).toEqual({ q: 'hello world', lang: 'en', x: '✓' });
  });

  it('repeated keys become arrays', () => {
    expect(parseQuery('tag=a&tag=b&tag=c')).toEqual({ tag: ['a', 'b', 'c'] });
  });

  it('keys without a value are empty strings; empty pairs are skipped', () => {
    expect(parseQuery('flag&&x=1;y=2')).toEqual({ flag: '', x: '1', y: '2' });
  });

  it('builds nested objects and arrays', () => {
    expect(parseQuery('user[name]=ada&user[langs][]=en&user[langs][]=fr&user[addr][city]=x')).toEqual({
      user: { name: 'ada', langs: ['en', 'fr'], addr: { city: 'x' } },
    });
  });

  it('can keep bracketed keys flat', () => {
    expect(parseQuery('a[b]=1', { nested: false })).toEqual({ 'a[b]': '1' });
  });

  it('leaves malformed escapes as they are', () => {
    expect(parseQuery('bad=%E0%A4%A')).toEqual({ bad: '%E0%A4%A' });
  });
});

describe('stringifyQuery', () => {
  it('encodes scalars and skips undefined', () => {
    expect(stringifyQuery({ q: 'a b&c', n: 1, yes: true, none: null, skip: undefined })).toBe('q=a%20b%26c&n=1&yes=true&none=');
  });

  it('writes arrays in three formats', () => {
    expect(stringifyQuery({ a: [1, 2] })).toBe('a[]=1&a[]=2');
    expect(stringifyQuery({ a: [1, 2] }, { arrayFormat: 'repeat' })).toBe('a=1&a=2');
    expect(stringifyQuery({ a: [1, 2] }, { arrayFormat: 'indices' })).toBe('a[0]=1&a[1]=2');
  });

  it('writes nested objects with brackets, sorted on request', () => {
    expect(stringifyQuery({ z: 1, user: { name: 'ada', age: 36 } }, { sort: true })).toBe('user[age]=36&user[name]=ada&z=1');
  });

  it('adds a ? prefix only to a non-empty query', () => {
    expect(stringifyQuery({ a: 'b' }, { addQueryPrefix: true })).toBe('?a=b');
    expect(stringifyQuery({}, { addQueryPrefix: true })).toBe('');
  });

  it('round-trips through parseQuery', () => {
    const query = { q: 'x y', tags: ['a', 'b'], page: { size: '10', sort: 'name' } };
    expect(parseQuery(stringifyQuery(query))).toEqual(query);
  });
});

describe('getParam', () => {
  it('reads a string, the first of an array, or the fallback', () => {
    const query = parseQuery('a=1&b=2&b=3&c[d]=4');
    expect(getParam(query, 'a')).toBe('1');
    expect(getParam(query, 'b')).toBe('2');
    expect(getParam(query, 'c')).toBeUndefined();
    expect(getParam(query, 'missing', 'dflt')).toBe('dflt');
    expect(getParam({ e: [{ x: '1' }] }, 'e', 'f')).toBe('f');
  });
});
