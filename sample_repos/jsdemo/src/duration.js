// Durations: parse "1h 30m" and ISO 8601 "PT1H30M", format them back, and do arithmetic.

export const UNITS = Object.freeze({
  w: 7 * 24 * 3600 * 1000,
  d: 24 * 3600 * 1000,
  h: 3600 * 1000,
  m: 60 * 1000,
  s: 1000,
  ms: 1,
});

const ALIASES = {
  weeks: 'w', week: 'w', wk: 'w',
  days: 'd', day: 'd',
  hours: 'h', hour: 'h', hr: 'h', hrs: 'h',
  minutes: 'm', minute: 'm', min: 'm', mins: 'm',
  seconds: 's', second: 's', sec: 's', secs: 's',
  milliseconds: 'ms', millisecond: 'ms', msec: 'ms',
};

const LONG_NAMES = { w: 'week', d: 'day', h: 'hour', m: 'minute', s: 'second', ms: 'millisecond' };

export const normalizeUnit = (unit) => {
  const lower = unit.toLowerCase();
  return lower in UNITS ? lower : ALIASES[lower];
};

/** Parse "1h30m", "2 days 4 hours", "1.5h" or "-90s" into milliseconds. */
export function parseDuration(text) {
  const source = String(text).trim();
  const sign = source.startsWith('-') ? -1 : 1;
  const body = source.replace(/^[-+]/, '');
  const pattern = /(\d+(?:\.\d+)?)\s*([a-zA-Z]+)\s*,?\s*/gy;
  let total = 0;
  let matched = 0;
  let match;
  while ((match = pattern.exec(body)) !== null) {
    const unit = normalizeUnit(match[2]);
    if (!unit) {
      throw new SyntaxError(`unknown duration unit "${match[2]}" in "${text}"`);
    }
    total += Number(match[1]) * UNITS[unit];
    matched = pattern.lastIndex;
  }
  if (!body || matched !== body.length) {
    throw new SyntaxError(`invalid duration "${text}"`);
  }
  return sign * total;
}

/** Split a millisecond count into whole units, largest first: { h: 1, m: 30 }. */
export function splitDuration(ms) {
  let rest = Math.abs(Math.round(ms));
  const parts = {};
  for (const [unit, size] of Object.entries(UNITS)) {
    if (rest >= size) {
      parts[unit] = Math.floor(rest / size);
      rest %= size;
    }
  }
  return parts;
}

/** Format milliseconds as "1h 30m" (or "1 hour, 30 minutes" with `long`). */
export function formatDuration(ms, { long = false, largest = Infinity } = {}) {
  const parts = Object.entries(splitDuration(ms)).slice(0, largest);
  if (parts.length === 0) {
    return long ? '0 seconds' : '0s';
  }
  const sign = ms < 0 ? '-' : '';
  const words = parts.map(([unit, n]) => {
    if (!long) return `${n}${unit}`;
    return `${n} ${LONG_NAMES[unit]}${n === 1 ? '' : 's'}`;
  });
  return sign + words.join(long ? ', ' : ' ');
}

const ISO = /^(-)?P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Parse an ISO 8601 duration without years and months ("P1DT2H", "PT0.5S"). */
export function parseIsoDuration(text) {
  const match = ISO.exec(text);
  if (!match || text.endsWith('T') || text === 'P' || text === '-P') {
    throw new SyntaxError(`invalid ISO 8601 duration "${text}"`);
  }
  const [, minus, w, d, h, m, s] = match;
  const total = [[w, 'w'], [d, 'd'], [h, 'h'], [m, 'm'], [s, 's']]
    .reduce((sum, [value, unit]) => sum + (value ? Number(value) * UNITS[unit] : 0), 0);
  return minus ? -total : total;
}

/** Format milliseconds as an ISO 8601 duration ("PT1H30M"); weeks are written as days. */
export function toIsoDuration(ms) {
  const { w = 0, d = 0, h = 0, m = 0, s = 0, ms: millis = 0 } = splitDuration(ms);
  const days = w * 7 + d;
  const seconds = millis ? `${s}.${String(millis).padStart(3, '0').replace(/0+$/, '')}` : s;
  let time = '';
  if (h) time += `${h}H`;
  if (m) time += `${m}M`;
  if (seconds) time += `${seconds}S`;
  const body = (days ? `${days}D` : '') + (time ? `T${time}` : '');
  return (ms < 0 ? '-P' : 'P') + (body || 'T0S');
}

/** An immutable length of time with millisecond precision. */
export default class Duration {
  #ms;

  constructor(ms = 0) {
    if (!Number.isFinite(ms)) {
      throw new RangeError(`a duration must be finite, got ${ms}`);
    }
    this.#ms = Math.round(ms);
  }

  static parse(text) {
    const value = String(text).trim();
    return new Duration(/^-?P/.test(value) ? parseIsoDuration(value) : parseDuration(value));
  }

  static between(start, end) {
    return new Duration(new Date(end).getTime() - new Date(start).getTime());
  }

  get milliseconds() {
    return this.#ms;
  }

  get totalSeconds() {
    return this.#ms / UNITS.s;
  }

  get totalHours() {
    return this.#ms / UNITS.h;
  }

  /** The whole-unit parts, as in { days: 1, hours: 2, minutes: 0, seconds: 5 }. */
  get parts() {
    const abs = Math.abs(this.#ms);
    return {
      days: Math.floor(abs / UNITS.d),
      hours: Math.floor((abs % UNITS.d) / UNITS.h),
      minutes: Math.floor((abs % UNITS.h) / UNITS.m),
      seconds: Math.floor((abs % UNITS.m) / UNITS.s),
    };
  }

  get isNegative() {
    return this.#ms < 0;
  }

  plus(other) {
    return new Duration(this.#ms + Duration.from(other).milliseconds);
  }

  minus(other) {
    return new Duration(this.#ms - Duration.from(other).milliseconds);
  }

  times(factor) {
    return new Duration(this.#ms * factor);
  }

  abs() {
    return this.isNegative ? new Duration(-this.#ms) : this;
  }

  compare(other) {
    const diff = this.#ms - Duration.from(other).milliseconds;
    return Math.sign(diff);
  }

  equals(other) {
    return this.compare(other) === 0;
  }

  addTo(date) {
    return new Date(new Date(date).getTime() + this.#ms);
  }

  toString() {
    return formatDuration(this.#ms);
  }

  toJSON() {
    return toIsoDuration(this.#ms);
  }

  /** Accept a Duration, a number of milliseconds or a string for `parse`. */
  static from(value) {
    if (value instanceof Duration) {
      return value;
    }
    if (typeof value === 'number') {
      return new Duration(value);
    }
    if (typeof value === 'string') {
      return Duration.parse(value);
    }
    throw new TypeError(`cannot make a duration from ${typeof value}`);
  }
}

/** "in 5 minutes", "3 hours ago", "just now": the largest unit, rounded. */
export const humanizeRelative = (ms, { now = 'just now' } = {}) => {
  const abs = Math.abs(ms);
  if (abs < 45 * UNITS.s) {
    return now;
  }
  const [unit] = Object.entries(UNITS).find(([, size]) => abs >= size * 0.75) ?? ['s'];
  const count = Math.max(1, Math.round(abs / UNITS[unit]));
  const phrase = `${count} ${LONG_NAMES[unit]}${count === 1 ? '' : 's'}`;
  return ms < 0 ? `${phrase} ago` : `in ${phrase}`;
};
