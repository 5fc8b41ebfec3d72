// A small runtime validator whose schemas carry their static type: Infer<typeof schema>.

export interface Issue {
  path: (string | number)[];
  message: string;
}

export class ValidationError extends Error {
  readonly issues: Issue[];

  constructor(issues: Issue[]) {
    super(issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('; '));
    this.name = 'ValidationError';
    this.issues = issues;
  }

  get first(): Issue | undefined {
    return this.issues[0];
  }
}

export function formatPath(path: readonly (string | number)[]): string {
  if (path.length === 0) {
    return '(root)';
  }
  return path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${part}`))
    .join('');
}

export type SafeParse<T> = { success: true; data: T } | { success: false; issues: Issue[] };

export abstract class Schema<T> {
  /** Check `input` at `path`, pushing problems onto `issues`; the value if it is valid. */
  abstract check(input: unknown, path: (string | number)[], issues: Issue[]): T | undefined;

  parse(input: unknown): T {
    const result = this.safeParse(input);
    if (!result.success) {
      throw new ValidationError(result.issues);
    }
    return result.data;
  }

  safeParse(input: unknown): SafeParse<T> {
    const issues: Issue[] = [];
    const data = this.check(input, [], issues);
    return issues.length ? { success: false, issues } : { success: true, data: data as T };
  }

  optional(): Schema<T | undefined> {
    return new OptionalSchema(this);
  }

  refine(predicate: (value: T) => boolean, message: string): Schema<T> {
    return new RefinedSchema(this, predicate, message);
  }
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

class OptionalSchema<T> extends Schema<T | undefined> {
  constructor(private readonly inner: Schema<T>) {
    super();
  }

  check(input: unknown, path: (string | number)[], issues: Issue[]): T | undefined {
    return input === undefined ? undefined : this.inner.check(input, path, issues);
  }
}

class RefinedSchema<T> extends Schema<T> {
  constructor(
    private readonly inner: Schema<T>,
    private readonly predicate: (value: T) => boolean,
    private readonly message: string,
  ) {
    super();
  }

  check(input: unknown, path: (string | number)[], issues: Issue[]): T | undefined {
    const before = issues.length;
    const value = this.inner.check(input, path, issues);
    if (issues.length === before && !this.predicate(value as T)) {
      issues.push({ path: [...path], message: this.message });
    }
    return value;
  }
}

class PrimitiveSchema<T> extends Schema<T> {
  constructor(private readonly kind: 'string' | 'number' | 'boolean') {
    super();
  }

  check(input: unknown, path: (string | number)[], issues: Issue[]): T | undefined {
    const valid = typeof input === this.kind && !(this.kind === 'number' && Number.isNaN(input));
    if (!valid) {
      const got = input === null ? 'null' : Array.isArray(input) ? 'array' : typeof input;
      issues.push({ path: [...path], message: `expected ${this.kind}, got ${got}` });
      return undefined;
    }
    return input as T;
  }
}

class ArraySchema<T> extends Schema<T[]> {
  constructor(private readonly item: Schema<T>) {
    super();
  }

  check(input: unknown, path: (string | number)[], issues: Issue[]): T[] | undefined {
    if (!Array.isArray(input)) {
      issues.push({ path: [...path], message: 'expected array' });
      return undefined;
    }
    return input.map((value, i) => this.item.check(value, [...path, i], issues) as T);
  }
}

type Shape = Record<string, Schema<unknown>>;
type ObjectOf<S extends Shape> = { [K in keyof S]: Infer<S[K]> };

class ObjectSchema<S extends Shape> extends Schema<ObjectOf<S>> {
  constructor(private readonly shape: S, private readonly strict: boolean) {
    super();
  }

  check(input: unknown, path: (string | number)[], issues: Issue[]): ObjectOf<S> | undefined {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      issues.push({ path: [...path], message: 'expected object' });
      return undefined;
    }
    const record = input as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, schema] of Object.entries(this.shape)) {
      const value = schema.check(record[key], [...path, key], issues);
      if (value !== undefined) out[key] = value;
    }
    if (this.strict) {
      for (const key of Object.keys(record).filter((k) => !(k in this.shape))) {
        issues.push({ path: [...path, key], message: 'unexpected key' });
      }
    }
    return out as ObjectOf<S>;
  }
}

class LiteralSchema<T extends string | number | boolean> extends Schema<T> {
  constructor(private readonly values: readonly T[]) {
    super();
  }

  check(input: unknown, path: (string | number)[], issues: Issue[]): T | undefined {
    if (!this.values.includes(input as T)) {
      issues.push({ path: [...path], message: `expected one of ${this.values.map((v) => JSON.stringify(v)).join(', ')}` });
      return undefined;
    }
    return input as T;
  }
}

export const string = (): Schema<string> => new PrimitiveSchema<string>('string');
export const number = (): Schema<number> => new PrimitiveSchema<number>('number');
export const boolean = (): Schema<boolean> => new PrimitiveSchema<boolean>('boolean');
export const array = <T>(item: Schema<T>): Schema<T[]> => new ArraySchema(item);
export const object = <S extends Shape>(shape: S, { strict = false } = {}): Schema<ObjectOf<S>> =>
  new ObjectSchema(shape, strict);
export const oneOf = <const T extends readonly (string | number | boolean)[]>(...values: T): Schema<T[number]> =>
  new LiteralSchema<T[number]>(values);
