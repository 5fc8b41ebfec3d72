// Query strings: parse into a typed record and stringify back, with nested keys (a[b]=c)
// and repeated keys as arrays.

export type QueryValue = string | QueryValue[] | { [key: string]: QueryValue };
export type Query = { [key: string]: QueryValue };
export type Scalar = string | number | boolean | null | undefined;
export type Stringifiable = Scalar | Stringifiable[] | { [key: string]: Stringifiable };

export interface ParseOptions {
  /** Split "a[b][c]" keys into nested objects (default true). */
  nested?: boolean;
  /** How deep nested keys may go before the rest is kept as one key (default 5). */
  depth?: number;
}

const decode = (text: string): string => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/** "a[b][c]" → ["a", "b", "c"]; "list[]" → ["list", ""]. */
export function splitKey(key: string, depth = 5): string[] {
  const head = key.match(/^[^[]*/)![0];
  const parts = [head];
  const rest = /\[([^\]]*)\]/g;
  let match: RegExpExecArray | null;
  let consumed = head.length;
  while ((match = rest.exec(key)) !== null && parts.length <= depth) {
    if (match.index !== consumed) break;
    parts.push(match[1]);
    consumed = rest.lastIndex;
  }
  if (consumed < key.length) {
    parts.push(key.slice(consumed));
  }
  return parts;
}

function assign(target: Query, path: string[], value: string): void {
  const [key, ...rest] = path;
  if (rest.length === 0) {
    const existing = target[key];
    if (existing === undefined) target[key] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else target[key] = [existing, value];
    return;
  }
  if (rest[0] === '') {
    const list = Array.isArray(target[key]) ? (target[key] as QueryValue[]) : [];
    list.push(value);
    target[key] = list;
    return;
  }
  const child = target[key];
  const next: Query = child && typeof child === 'object' && !Array.isArray(child) ? child : {};
  target[key] = next;
  assign(next, rest, value);
}

export function parseQuery(input: string, options: ParseOptions = {}): Query {
  const { nested = true, depth = 5 } = options;
  const result: Query = {};
  const text = input.startsWith('?') ? input.slice(1) : input;
  for (const pair of text.split(/[&;]/)) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const rawKey = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1));
    assign(result, nested ? splitKey(rawKey, depth) : [rawKey], value);
  }
  return result;
}

export interface StringifyOptions {
  /** Write arrays as "a[]=1&a[]=2" (brackets, the default) or "a=1&a=2" (repeat). */
  arrayFormat?: 'brackets' | 'repeat' | 'indices';
  /** Sort keys alphabetically. */
  sort?: boolean;
  /** Prefix the result with "?" when it is not empty. */
  addQueryPrefix?: boolean;
}

function encodePairs(prefix: string, value: Stringifiable, options: StringifyOptions, out: string[]): void {
  if (value === undefined) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const format = options.arrayFormat ?? 'brackets';
      const key = format === 'repeat' ? prefix : format === 'indices' ? `${prefix}[${i}]` : `${prefix}[]`;
      encodePairs(key, item, options, out);
    });
    return;
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    for (const key of options.sort ? keys.sort() : keys) {
      encodePairs(`${prefix}[${key}]`, value[key], options, out);
    }
    return;
  }
  out.push(`${encodeURIComponent(prefix).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${encodeURIComponent(value ?? '')}`);
}

export function stringifyQuery(query: Record<string, Stringifiable>, options: StringifyOptions = {}): string {
  const out: string[] = [];
  const keys = Object.keys(query);
  for (const key of options.sort ? keys.sort() : keys) {
    encodePairs(key, query[key], options, out);
  }
  const text = out.join('&');
  return options.addQueryPrefix && text ? `?${text}` : text;
}

/** Read one parameter as a single string: the first of several, undefined if missing or nested. */
export function getParam(query: Query, key: string): string | undefined;
export function getParam(query: Query, key: string, fallback: string): string;
export function getParam(query: Query, key: string, fallback?: string): string | undefined {
  const value = query[key];
  if (Array.isArray(value)) {
    return typeof value[0] === 'string' ? value[0] : fallback;
  }
  return typeof value === 'string' ? value : fallback;
}
