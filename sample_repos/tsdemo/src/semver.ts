// Semantic versions: parse, compare, bump, and test against ranges ("^1.2.0", ">=1 <2", "1.x").

export type ReleaseType = 'major' | 'minor' | 'patch' | 'prerelease';

const PATTERN = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$/;

export class SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: readonly (string | number)[];
  readonly build: readonly string[];

  constructor(version: string) {
    const match = PATTERN.exec(version.trim());
    if (!match) {
      throw new TypeError(`invalid version "${version}"`);
    }
    this.major = Number(match[1]);
    this.minor = Number(match[2]);
    this.patch = Number(match[3]);
    this.prerelease = match[4] ? match[4].split('.').map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [];
    this.build = match[5] ? match[5].split('.') : [];
  }

  get isPrerelease(): boolean {
    return this.prerelease.length > 0;
  }

  compare(other: SemVer | string): -1 | 0 | 1 {
    const that = typeof other === 'string' ? new SemVer(other) : other;
    for (const key of ['major', 'minor', 'patch'] as const) {
      if (this[key] !== that[key]) return this[key] > that[key] ? 1 : -1;
    }
    return comparePrerelease(this.prerelease, that.prerelease);
  }

  inc(release: ReleaseType, identifier = 'rc'): SemVer {
    const { major, minor, patch } = this;
    switch (release) {
      case 'major':
        return new SemVer(`${major + 1}.0.0`);
      case 'minor':
        return new SemVer(`${major}.${minor + 1}.0`);
      case 'patch':
        return new SemVer(this.isPrerelease ? `${major}.${minor}.${patch}` : `${major}.${minor}.${patch + 1}`);
      case 'prerelease': {
        const last = this.prerelease.at(-1);
        const pre = typeof last === 'number' ? [...this.prerelease.slice(0, -1), last + 1].join('.') : `${identifier}.0`;
        const base = this.isPrerelease ? `${major}.${minor}.${patch}` : `${major}.${minor}.${patch + 1}`;
        return new SemVer(`${base}-${pre}`);
      }
    }
  }

  toString(): string {
    const pre = this.prerelease.length ? `-${this.prerelease.join('.')}` : '';
    return `${this.major}.${this.minor}.${this.patch}${pre}`;
  }
}

function comparePrerelease(a: readonly (string | number)[], b: readonly (string | number)[]): -1 | 0 | 1 {
  if (!a.length || !b.length) {
    return a.length === b.length ? 0 : a.length ? -1 : 1;
  }
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    const x = a[i];
    const y = b[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x > y ? 1 : -1;
    if (typeof x === 'number') return -1;
    if (typeof y === 'number') return 1;
    return x > y ? 1 : -1;
  }
  return 0;
}

export function parse(version: string): SemVer | null {
  try {
    return new SemVer(version);
  } catch {
    return null;
  }
}

export const compare = (a: string, b: string): -1 | 0 | 1 => new SemVer(a).compare(b);

/** Sort version strings ascending (a copy; pass `descending` to reverse). */
export function sort(versions: readonly string[], descending = false): string[] {
  const sorted = [...versions].sort(compare);
  return descending ? sorted.reverse() : sorted;
}

type Comparator = { op: '<' | '<=' | '>' | '>=' | '='; version: SemVer };

/** Expand one range term ("^1.2.3", "~1.2", "1.x", ">=2.0.0") into comparators. */
export function expandTerm(term: string): Comparator[] {
  const op = term.match(/^(<=|>=|<|>|=|\^|~)?/)![0];
  const parts = term.slice(op.length).replace(/^v/, '').split(/[.+-]/, 3);
  const nums = parts.map((p) => (/^(x|X|\*|)$/.test(p) ? null : Number(p)));
  while (nums.length < 3) nums.push(null);
  const [ma, mi, pa] = nums;
  const v = (a: number, b: number, c: number) => new SemVer(`${a}.${b}.${c}`);
  if (ma === null) return [];
  const full = mi !== null && pa !== null ? new SemVer(term.slice(op.length)) : null;
  if (op === '^' || op === '~' || !full) {
    const lower = full ?? v(ma, mi ?? 0, pa ?? 0);
    let upper: SemVer;
    if (op === '^' && ma > 0) upper = v(ma + 1, 0, 0);
    else if (op === '^' && mi !== null && mi > 0) upper = v(0, mi + 1, 0);
    else if (op === '^' && mi !== null && pa !== null) upper = v(0, 0, pa + 1);
    else if (mi === null) upper = v(ma + 1, 0, 0);
    else if (op === '~' || pa === null) upper = v(ma, mi + 1, 0);
    else upper = v(ma, mi, pa + 1);
    return [{ op: '>=', version: lower }, { op: '<', version: upper }];
  }
  return [{ op: (op || '=') as Comparator['op'], version: full }];
}

const TEST: Record<Comparator['op'], (c: number) => boolean> = {
  '<': (c) => c < 0, '<=': (c) => c <= 0, '>': (c) => c > 0, '>=': (c) => c >= 0, '=': (c) => c === 0,
};

/** Does `version` satisfy `range` ("||" between alternatives, spaces between terms)? */
export function satisfies(version: string | SemVer, range: string): boolean {
  const v = typeof version === 'string' ? new SemVer(version) : version;
  return range.split('||').some((alternative) => {
    const comparators = alternative.trim().split(/\s+/).filter(Boolean).flatMap(expandTerm);
    if (v.isPrerelease && !comparators.some((c) => c.version.isPrerelease)) return false;
    return comparators.every((c) => TEST[c.op](v.compare(c.version)));
  });
}

/** The highest version in `versions` that satisfies `range`, or null. */
export function maxSatisfying(versions: readonly string[], range: string): string | null {
  let best: SemVer | null = null;
  for (const text of versions) {
    const v = parse(text);
    if (v && satisfies(v, range) && (!best || v.compare(best) > 0)) {
      best = v;
    }
  }
  return best ? best.toString() : null;
}
