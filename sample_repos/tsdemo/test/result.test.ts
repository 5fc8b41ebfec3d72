import { describe, expect, it } from 'vitest';

import {
  all, andThen, err, isOk, map, mapErr, ok, partition, tryCatch, unwrap, unwrapOr, type Result,
} from '../src/result.js';

const half = (n: number): Result<number, string> => (n % 2 === 0 ? ok(n / 2) : err(`${n} is odd`));

describe('constructors and guards', () => {
  it('ok and err build tagged values', () => {
    expect(ok(1)).toEqual({ ok: true, value: 1 });
    expect(err('bad')).toEqual({ ok: false, error: 'bad' });
  });

  it('isOk narrows', () => {
    const r: Result<number, string> = half(4);
    expect(isOk(r)).toBe(true);
    expect(isOk(half(3))).toBe(false);
  });
});

describe('combinators', () => {
  it('map transforms an Ok and passes an Err through', () => {
    expect(map(ok(2), (n) => n * 10)).toEqual(ok(20));
    const e = err('no');
    expect(map(e, (n: number) => n * 10)).toBe(e);
  });

  it('mapErr transforms an Err and passes an Ok through', () => {
    expect(mapErr(err('no'), (s) => s.toUpperCase())).toEqual(err('NO'));
    const o = ok(1);
    expect(mapErr(o, () => 'x')).toBe(o);
  });

  it('andThen chains fallible steps', () => {
    expect(andThen(half(8), half)).toEqual(ok(2));
    expect(andThen(half(6), half)).toEqual(err('3 is odd'));
    expect(andThen(half(5), half)).toEqual(err('5 is odd'));
  });

  it('unwrapOr takes a value or a function of the error', () => {
    expect(unwrapOr(half(4), 0)).toBe(2);
    expect(unwrapOr(half(3), 0)).toBe(0);
    expect(unwrapOr(half(3), (e) => e.length)).toBe(8);
  });

  it('unwrap returns the value or throws', () => {
    expect(unwrap(ok('v'))).toBe('v');
    expect(() => unwrap(err(new RangeError('r')))).toThrow(RangeError);
    expect(() => unwrap(err('plain'))).toThrow(/^plain$/);
  });
});

describe('tryCatch', () => {
  it('catches synchronous throws', () => {
    expect(tryCatch(() => JSON.parse('[1]'))).toEqual(ok([1]));
    const r = tryCatch(() => JSON.parse('{'));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toBeInstanceOf(SyntaxError);
  });

  it('wraps non-Error throws', () => {
    const r = tryCatch(() => {
      throw 'string';
    });
    expect(r).toEqual(err(new Error('string')));
  });

  it('catches rejected promises', async () => {
    await expect(tryCatch(async () => 7)).resolves.toEqual(ok(7));
    const r = await tryCatch(() => Promise.reject(new Error('late')));
    expect(r).toEqual(err(new Error('late')));
    expect(await tryCatch(() => Promise.reject(42))).toEqual(err(new Error('42')));
  });
});

describe('collections', () => {
  it('all collects values or returns the first error', () => {
    expect(all([half(2), half(4)])).toEqual(ok([1, 2]));
    expect(all([half(2), half(3), half(5)])).toEqual(err('3 is odd'));
    expect(all([])).toEqual(ok([]));
  });

  it('partition splits values and errors', () => {
    expect(partition([half(2), half(3), half(6)])).toEqual([[1, 3], ['3 is odd']]);
  });
});
