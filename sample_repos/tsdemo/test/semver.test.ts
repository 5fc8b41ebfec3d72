import { describe, expect, it } from 'vitest';

import { compare, expandTerm, maxSatisfying, parse, satisfies, SemVer, sort } from '../src/semver.js';

describe('SemVer', () => {
  it('parses the parts, prerelease and build', () => {
    const v = new SemVer('v1.2.3-beta.4+build.5');
    expect([v.major, v.minor, v.patch]).toEqual([1, 2, 3]);
    expect(v.prerelease).toEqual(['beta', 4]);
    expect(v.build).toEqual(['build', '5']);
    expect(v.isPrerelease).toBe(true);
    expect(new SemVer('1.0.0').isPrerelease).toBe(false);
    expect(new SemVer('1.0.0').build).toEqual([]);
  });

  it('rejects invalid versions', () => {
    expect(() => new SemVer('1.2')).toThrow(TypeError);
    expect(parse('not.a.version')).toBeNull();
    expect(parse('2.0.0')?.major).toBe(2);
  });

  it('toString drops the build and the v', () => {
    expect(new SemVer('v1.2.3-rc.1+abc').toString()).toBe('1.2.3-rc.1');
    expect(String(new SemVer('0.0.1'))).toBe('0.0.1');
  });

  it('compares by precedence', () => {
    expect(new SemVer('1.2.3').compare('1.2.4')).toBe(-1);
    expect(new SemVer('2.0.0').compare('1.9.9')).toBe(1);
    expect(new SemVer('1.0.0').compare(new SemVer('1.0.0+build'))).toBe(0);
    expect(new SemVer('1.0.0-alpha').compare('1.0.0')).toBe(-1);
    expect(new SemVer('1.0.0').compare('1.0.0-alpha')).toBe(1);
  });

  it('orders prereleases as the spec says', () => {
    const order = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0'];
    for (let i = 1; i < order.length; i += 1) {
      expect(compare(order[i - 1], order[i]), `${order[i - 1]} < ${order[i]}`).toBe(-1);
      expect(compare(order[i], order[i - 1])).toBe(1);
    }
    expect(compare('1.0.0-alpha.1', '1.0.0-alpha.1')).toBe(0);
  });

  it('inc bumps each release type', () => {
    const v = new SemVer('1.2.3');
    expect(v.inc('major').toString()).toBe('2.0.0');
    expect(v.inc('minor').toString()).toBe('1.3.0');
    expect(v.inc('patch').toString()).toBe('1.2.4');
    expect(v.inc('prerelease').toString()).toBe('1.2.4-rc.0');
    expect(v.inc('prerelease', 'beta').toString()).toBe('1.2.4-beta.0');
  });

  it('inc on a prerelease finishes or continues it', () => {
    const pre = new SemVer('1.2.4-rc.1');
    expect(pre.inc('patch').toString()).toBe('1.2.4');
    expect(pre.inc('prerelease').toString()).toBe('1.2.4-rc.2');
    expect(new SemVer('1.0.0-next').inc('prerelease').toString()).toBe('1.0.0-rc.0');
  });
});

describe('sorting', () => {
  it('sort orders versions without touching the input', () => {
    const input = ['1.10.0', '1.2.0', '1.2.0-rc.1', '0.9.9'];
    expect(sort(input)).toEqual(['0.9.9', '1.2.0-rc.1', '1.2.0', '1.10.0']);
    expect(sort(input, true)).toEqual(['1.10.0', '1.2.0', '1.2.0-rc.1', '0.9.9']);
    expect(input[0]).toBe('1.10.0');
  });
});

describe('ranges', () => {
  it('expandTerm turns caret, tilde and x ranges into bounds', () => {
    const show = (term: string) => expandTerm(term).map((c) => `${c.op}${c.version}`).join(' ');
    expect(show('^1.2.3')).toBe('>=1.2.3 <2.0.0');
    expect(show('^0.2.3')).toBe('>=0.2.3 <0.3.0');
    expect(show('^0.0.3')).toBe('>=0.0.3 <0.0.4');
    expect(show('~1.2.3')).toBe('>=1.2.3 <1.3.0');
    expect(show('1.x')).toBe('>=1.0.0 <2.0.0');
    expect(show('1.2')).toBe('>=1.2.0 <1.3.0');
    expect(show('>=2.0.0')).toBe('>=2.0.0');
    expect(show('1.2.3')).toBe('=1.2.3');
    expect(show('*')).toBe('');
  });

  it('satisfies checks every term of one alternative', () => {
    expect(satisfies('1.5.0', '^1.2.3')).toBe(true);
    expect(satisfies('2.0.0', '^1.2.3')).toBe(false);
    expect(satisfies('1.2.9', '~1.2.0')).toBe(true);
    expect(satisfies('1.3.0', '>=1.0.0 <1.3.0')).toBe(false);
    expect(satisfies('3.1.0', '^1.0.0 || ^3.0.0')).toBe(true);
    expect(satisfies('5.0.0', '*')).toBe(true);
  });

  it('prereleases match only ranges that mention a prerelease', () => {
    expect(satisfies('1.3.0-rc.1', '^1.2.0')).toBe(false);
    expect(satisfies('1.3.0-rc.1', '>=1.3.0-rc.0 <2.0.0')).toBe(true);
    expect(satisfies(new SemVer('1.2.0'), '1.2.0')).toBe(true);
  });

  it('maxSatisfying picks the highest match', () => {
    const versions = ['1.0.0', '1.4.2', '1.9.0-rc.1', '2.0.0', 'garbage'];
    expect(maxSatisfying(versions, '^1.0.0')).toBe('1.4.2');
    expect(maxSatisfying(versions, '>=1.0.0')).toBe('2.0.0');
    expect(maxSatisfying(versions, '^3.0.0')).toBeNull();
  });
});
