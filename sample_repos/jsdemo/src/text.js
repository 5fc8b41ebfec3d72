// Text helpers: capitalisation, wrapping, truncation, templates and dedenting.

export const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);

export const pluralize = (count, singular, plural = `${singular}s`) =>
  `${count} ${count === 1 ? singular : plural}`;

/** Split `text` into lines of at most `width` characters, breaking between words. */
export function wrap(text, width = 72) {
  if (width < 1) {
    throw new RangeError(`width must be positive, got ${width}`);
  }
  const lines = [];
  let current = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (current && current.length + 1 + word.length > width) {
      lines.push(current);
      current = word;
    } else {
      current = current ? `${current} ${word}` : word;
    }
  }
  if (current) {
    lines.push(current);
  }
  return lines;
}

/** Shorten `text` to `max` characters, the ellipsis included. */
export function truncate(text, max, { ellipsis = '…', wholeWords = false } = {}) {
  if (text.length <= max) {
    return text;
  }
  let cut = text.slice(0, Math.max(0, max - ellipsis.length));
  const splitsWord = /\S/.test(text.charAt(cut.length));
  if (wholeWords && splitsWord && cut.includes(' ')) {
    cut = cut.slice(0, cut.lastIndexOf(' '));
  }
  return cut.trimEnd() + ellipsis;
}

/** Replace `{name}` and `{obj.path}` placeholders; unknown names stay as they are. */
export const template = (source, vars) => {
  return source.replace(/\{([\w.]+)\}/g, (match, path) => {
    const value = path.split('.').reduce((obj, key) => (obj == null ? undefined : obj[key]), vars);
    return value === undefined ? match : String(value);
  });
};

/** Remove the indentation common to every non-blank line. */
export function dedent(source) {
  const lines = source.replace(/^\n/, '').split('\n');
  const indents = lines
    .filter((line) => line.trim())
    .map((line) => line.match(/^[ \t]*/)[0].length);
  const common = indents.length ? Math.min(...indents) : 0;
  return lines.map((line) => line.slice(common)).join('\n').replace(/\s+$/, '');
}

/** Split camelCase, snake_case, kebab-case and spaced text into lower-case words. */
export function splitWords(text) {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_\-]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());
}

export const toCamel = (text) =>
  splitWords(text)
    .map((word, i) => (i === 0 ? word : capitalize(word)))
    .join('');

export const toKebab = (text) => splitWords(text).join('-');
