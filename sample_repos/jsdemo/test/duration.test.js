import { describe, test } from 'node:test';
import assert from 'node:assert/strict';

import Duration, {
  UNITS, formatDuration, humanizeRelative, normalizeUnit, parseDuration, parseIsoDuration,
  splitDuration, toIsoDuration,
} from '../src/duration.js';

const H = UNITS.h;
const M = UNITS.m;

describe('parseDuration', () => {
  test('compact and spaced forms', () => {
    assert.equal(parseDuration('1h30m'), 90 * M);
    assert.equal(parseDuration('2 days 4 hours'), 52 * H);
    assert.equal(parseDuration('1w, 1d'), 8 * UNITS.d);
  });

  test('fractions, milliseconds and signs', () => {
    assert.equal(parseDuration('1.5h'), 90 * M);
    assert.equal(parseDuration('250ms'), 250);
    assert.equal(parseDuration('-90s'), -90000);
    assert.equal(parseDuration('+1m'), M);
  });

  test('rejects unknown units and garbage', () => {
    assert.throws(() => parseDuration('3 fortnights'), /unknown duration unit "fortnights"/);
    assert.throws(() => parseDuration('1h and then'), SyntaxError);
    assert.throws(() => parseDuration(''), /invalid duration/);
    assert.throws(() => parseDuration('12'), /invalid duration/);
  });

  test('normalizeUnit maps aliases to unit symbols', () => {
    assert.equal(normalizeUnit('Hours'), 'h');
    assert.equal(normalizeUnit('MS'), 'ms');
    assert.equal(normalizeUnit('fortnight'), undefined);
  });
});

describe('formatting', () => {
  test('splitDuration gives whole units, largest first', () => {
    assert.deepEqual(splitDuration(UNITS.w + 2 * H + 5), { w: 1, h: 2, ms: 5 });
    assert.deepEqual(splitDuration(-M), { m: 1 });
    assert.deepEqual(splitDuration(0), {});
  });

  test('formatDuration short form', () => {
    assert.equal(formatDuration(90 * M), '1h 30m');
    assert.equal(formatDuration(-1500), '-1s 500ms');
    assert.equal(formatDuration(0), '0s');
  });

  test('formatDuration long form and largest', () => {
    assert.equal(formatDuration(UNITS.d + H + M, { long: true }), '1 day, 1 hour, 1 minute');
    assert.equal(formatDuration(2 * UNITS.d + 3 * H + 4 * M, { long: true, largest: 2 }), '2 days, 3 hours');
    assert.equal(formatDuration(0, { long: true }), '0 seconds');
  });
});

describe('ISO 8601', () => {
  test('parseIsoDuration reads weeks, days and time parts', () => {
    assert.equal(parseIsoDuration('P1DT2H3M4.5S'), UNITS.d + 2 * H + 3 * M + 4500);
    assert.equal(parseIsoDuration('P2W'), 2 * UNITS.w);
    assert.equal(parseIsoDuration('-PT30M'), -30 * M);
  });

  test('parseIsoDuration rejects malformed input', () => {
    for (const bad of ['P', 'PT', '1H', 'P1Y', 'PT1D', 'P1DT']) {
      assert.throws(() => parseIsoDuration(bad), SyntaxError, bad);
    }
  });

  test('toIsoDuration writes weeks as days and keeps milliseconds', () => {
    assert.equal(toIsoDuration(UNITS.w + 90 * M), 'P7DT1H30M');
    assert.equal(toIsoDuration(1250), 'PT1.25S');
    assert.equal(toIsoDuration(0), 'PT0S');
    assert.equal(toIsoDuration(-2 * UNITS.d), '-P2D');
  });

  test('ISO round trip', () => {
    for (const ms of [1, 999, 61000, 3 * UNITS.d + 5, 10 * UNITS.w + 3 * H]) {
      assert.equal(parseIsoDuration(toIsoDuration(ms)), ms);
    }
  });
});

describe('Duration', () => {
  test('constructs from milliseconds and rejects non-finite values', () => {
    assert.equal(new Duration(1500.4).milliseconds, 1500);
    assert.equal(new Duration().milliseconds, 0);
    assert.throws(() => new Duration(Infinity), RangeError);
  });

  test('parse accepts both the compact and the ISO form', () => {
    assert.equal(Duration.parse('1h').milliseconds, H);
    assert.equal(Duration.parse(' PT1H ').milliseconds, H);
    assert.equal(Duration.parse('-P1D').milliseconds, -UNITS.d);
  });

  test('between two dates', () => {
    const d = Duration.between('2024-01-01T00:00:00Z', '2024-01-02T06:00:00Z');
    assert.equal(d.totalHours, 30);
  });

  test('totals and parts', () => {
    const d = new Duration(UNITS.d + 2 * H + 5 * UNITS.s);
    assert.equal(d.totalSeconds, 93605);
    assert.deepEqual(d.parts, { days: 1, hours: 2, minutes: 0, seconds: 5 });
    assert.deepEqual(new Duration(-90 * UNITS.s).parts, { days: 0, hours: 0, minutes: 1, seconds: 30 });
  });

  test('arithmetic accepts durations, numbers and strings', () => {
    const d = Duration.parse('1h');
    assert.equal(d.plus('30m').toString(), '1h 30m');
    assert.equal(d.minus(new Duration(M)).toString(), '59m');
    assert.equal(d.plus(1000).milliseconds, H + 1000);
    assert.equal(d.times(2.5).totalHours, 2.5);
  });

  test('sign and abs', () => {
    const negative = new Duration(-5);
    assert.equal(negative.isNegative, true);
    assert.equal(negative.abs().milliseconds, 5);
    const positive = new Duration(5);
    assert.equal(positive.isNegative, false);
    assert.equal(positive.abs(), positive);
  });

  test('compare and equals', () => {
    const d = Duration.parse('90s');
    assert.equal(d.compare('1m'), 1);
    assert.equal(d.compare('2m'), -1);
    assert.equal(d.compare(90000), 0);
    assert.equal(d.equals('1m 30s'), true);
    assert.equal(d.equals('1m'), false);
  });

  test('addTo shifts a date', () => {
    const date = Duration.parse('1d 1h').addTo('2024-02-28T23:00:00Z');
    assert.equal(date.toISOString(), '2024-03-01T00:00:00.000Z');
  });

  test('serialises to ISO in JSON', () => {
    assert.equal(JSON.stringify({ timeout: Duration.parse('1h30m') }), '{"timeout":"PT1H30M"}');
  });

  test('from rejects other types', () => {
    assert.throws(() => Duration.from({}), TypeError);
    assert.equal(Duration.from(10).milliseconds, 10);
  });
});

describe('humanizeRelative', () => {
  test('near times are "just now"', () => {
    assert.equal(humanizeRelative(10 * UNITS.s), 'just now');
    assert.equal(humanizeRelative(-3000, { now: 'now' }), 'now');
  });

  test('past and future phrases with the largest fitting unit', () => {
    assert.equal(humanizeRelative(5 * M), 'in 5 minutes');
    assert.equal(humanizeRelative(-3 * H), '3 hours ago');
    assert.equal(humanizeRelative(-UNITS.d), '1 day ago');
    assert.equal(humanizeRelative(50 * UNITS.s), 'in 1 minute');
  });
});
