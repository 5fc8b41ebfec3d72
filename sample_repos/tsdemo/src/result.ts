// A Result type for errors as values: Ok<T> | Err<E>, with the usual combinators.

export interface Ok<T> {
  readonly ok: true;
  readonly value: T;
}

export interface Err<E> {
  readonly ok: false;
  readonly error: E;
}

export type Result<T, E = Error> = Ok<T> | Err<E>;

export const ok = <T>(value: T): Ok<T> => ({ ok: true, value });

export const err = <E>(error: E): Err<E> => ({ ok: false, error });

export function isOk<T, E>(result: Result<T, E>): result is Ok<T> {
  return result.ok;
}

export function map<T, U, E>(result: Result<T, E>, fn: (value: T) => U): Result<U, E> {
  if (!result.ok) {
    return result;
  }
  return ok(fn(result.value));
}

export function mapErr<T, E, F>(result: Result<T, E>, fn: (error: E) => F): Result<T, F> {
  if (result.ok) {
    return result;
  }
  return err(fn(result.error));
}

export function andThen<T, U, E>(result: Result<T, E>, fn: (value: T) => Result<U, E>): Result<U, E> {
  return result.ok ? fn(result.value) : result;
}

/** The value, or `fallback` (a value, or a function of the error). */
export function unwrapOr<T, E>(result: Result<T, E>, fallback: T | ((error: E) => T)): T {
  if (result.ok) {
    return result.value;
  }
  return typeof fallback === 'function' ? (fallback as (error: E) => T)(result.error) : fallback;
}

/** The value; throws the error (wrapped in an Error if it is not one). */
export function unwrap<T, E>(result: Result<T, E>): T {
  if (result.ok) {
    return result.value;
  }
  throw result.error instanceof Error ? result.error : new Error(String(result.error));
}

/** Run `fn`, catching a thrown error (or a rejected promise) as an Err. */
export function tryCatch<T>(fn: () => Promise<T>): Promise<Result<T, Error>>;
export function tryCatch<T>(fn: () => T): Result<T, Error>;
export function tryCatch<T>(fn: () => T | Promise<T>): Result<T, Error> | Promise<Result<T, Error>> {
  const toError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));
  try {
    const value = fn();
    if (value instanceof Promise) {
      return value.then((v) => ok(v), (e: unknown) => err(toError(e)));
    }
    return ok(value);
  } catch (e) {
    return err(toError(e));
  }
}

/** All values if every result is Ok, else the first Err. */
export function all<T, E>(results: readonly Result<T, E>[]): Result<T[], E> {
  const values: T[] = [];
  for (const result of results) {
    if (!result.ok) {
      return result;
    }
    values.push(result.value);
  }
  return ok(values);
}

/** Split results into their values and their errors. */
export const partition = <T, E>(results: readonly Result<T, E>[]): [T[], E[]] => {
  const values: T[] = [];
  const errors: E[] = [];
  for (const r of results) (r.ok ? values.push(r.value) : errors.push(r.error));
  return [values, errors];
};
