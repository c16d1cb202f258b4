/**
 * Values that are there at once when warm and arrive later on a cache miss.
 * The request pipeline chains them with `andThen`, so a warm request runs
 * synchronously from start to finish (as hono's dispatch does) and only a
 * miss pays for a promise. (Not named `then`: a module exporting a `then` is
 * itself a thenable, and `await import()` of it calls that function.)
 */
export type Maybe<T> = T | Promise<T>;

export const isPromise = <T>(value: Maybe<T>): value is Promise<T> =>
  typeof (value as Promise<T> | null)?.then === 'function';

/** `f(value)`, at once when `value` is there, after it arrives otherwise. */
export function andThen<T, U>(value: Maybe<T>, f: (value: T) => Maybe<U>): Maybe<U> {
  return isPromise(value) ? value.then(f) : f(value);
}
