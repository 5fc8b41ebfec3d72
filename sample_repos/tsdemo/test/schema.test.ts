import { describe, expect, expectTypeOf, it } from 'vitest';

import {
  array, boolean, formatPath, number, object, oneOf, string, ValidationError, type Infer,
} from '../src/schema.js';

// Built inside each test, not at import time: a broken schema factory then fails the tests that
// use it instead of the whole file's import.
const userSchema = () =>
  object({
    name: string(),
    age: number().refine((n) => n >= 0, 'must not be negative'),
    admin: boolean().optional(),
    role: oneOf('owner', 'member'),
    tags: array(string()),
  });

describe('primitives', () => {
  it('accept their own type', () => {
    expect(string().parse('x')).toBe('x');
    expect(number().parse(0)).toBe(0);
    expect(boolean().parse(false)).toBe(false);
  });

  it('reject other types with what they got', () => {
    expect(string().safeParse(1)).toEqual({ success: false, issues: [{ path: [], message: 'expected string, got number' }] });
    expect(number().safeParse(Number.NaN).success).toBe(false);
    expect(boolean().safeParse(null)).toEqual({ success: false, issues: [{ path: [], message: 'expected boolean, got null' }] });
    expect(string().safeParse([]).success === false && string().safeParse([])).toMatchObject({ issues: [{ message: 'expected string, got array' }] });
  });
});

describe('composites', () => {
  it('object parses a valid value and infers its type', () => {
    const user = userSchema();
    const value = user.parse({ name: 'ada', age: 36, role: 'owner', tags: ['x'], extra: 1 });
    expect(value).toEqual({ name: 'ada', age: 36, role: 'owner', tags: ['x'] });
    expectTypeOf(value).toEqualTypeOf<Infer<typeof user>>();
    expectTypeOf(value.role).toEqualTypeOf<'owner' | 'member'>();
  });

  it('object reports every problem with its path', () => {
    const user = userSchema();
    const result = user.safeParse({ name: 1, age: -1, role: 'guest', tags: ['ok', 2] });
    expect(result.success).toBe(false);
    expect(!result.success && result.issues).toEqual([
      { path: ['name'], message: 'expected string, got number' },
      { path: ['age'], message: 'must not be negative' },
      { path: ['role'], message: 'expected one of "owner", "member"' },
      { path: ['tags', 1], message: 'expected string, got number' },
    ]);
  });

  it('object rejects non-objects', () => {
    const user = userSchema();
    for (const bad of [null, [], 'x']) {
      expect(user.safeParse(bad)).toEqual({ success: false, issues: [{ path: [], message: 'expected object' }] });
    }
  });

  it('strict objects reject unknown keys', () => {
    const point = object({ x: number() }, { strict: true });
    expect(point.safeParse({ x: 1, y: 2 })).toEqual({ success: false, issues: [{ path: ['y'], message: 'unexpected key' }] });
    expect(point.parse({ x: 1 })).toEqual({ x: 1 });
  });

  it('array checks each item and rejects non-arrays', () => {
    expect(array(number()).parse([1, 2])).toEqual([1, 2]);
    expect(array(number()).safeParse({})).toEqual({ success: false, issues: [{ path: [], message: 'expected array' }] });
  });

  it('optional accepts undefined but checks anything else', () => {
    const maybe = number().optional();
    expect(maybe.parse(undefined)).toBeUndefined();
    expect(maybe.parse(3)).toBe(3);
    expect(maybe.safeParse('3').success).toBe(false);
  });

  it('refine runs only on values that passed the inner check', () => {
    const even = number().refine((n) => n % 2 === 0, 'must be even');
    expect(even.parse(4)).toBe(4);
    expect(even.safeParse(3)).toEqual({ success: false, issues: [{ path: [], message: 'must be even' }] });
    expect(even.safeParse('x')).toEqual({ success: false, issues: [{ path: [], message: 'expected number, got string' }] });
  });
});

describe('errors', () => {
  it('parse throws a ValidationError listing the issues', () => {
    const user = userSchema();
    let error: unknown;
    try {
      user.parse({ name: 'ada', age: 1, role: 'member', tags: [null] });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    const v = error as ValidationError;
    expect(v.name).toBe('ValidationError');
    expect(v.message).toBe('tags[0]: expected string, got null');
    expect(v.first).toEqual({ path: ['tags', 0], message: 'expected string, got null' });
  });

  it('formatPath writes dotted paths with indices', () => {
    expect(formatPath([])).toBe('(root)');
    expect(formatPath(['a', 0, 'b'])).toBe('a[0].b');
    expect(formatPath([2, 'x'])).toBe('[2].x');
  });
});
