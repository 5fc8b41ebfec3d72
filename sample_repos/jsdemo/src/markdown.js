// A small markdown renderer: headings, paragraphs, lists, block quotes, fenced code,
// inline code, emphasis and links. Good enough for README snippets and changelogs.

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (ch) => ESCAPES[ch]);

/** The anchor a heading gets: lower case, punctuation dropped, spaces to dashes. */
export function slugifyHeading(text) {
  return text
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/\s+/g, '-');
}

/** Render the inline syntax of one line of text (the text is escaped first). */
export function renderInline(text) {
  let html = escapeHtml(text);
  html = html.replace(/`([^`]+)`/g, '<code>$1</code>');
  html = html.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  html = html.replace(/\*([^*]+)\*/g, '<em>$1</em>');
  html = html.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, '<a href="$2">$1</a>');
  return html;
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const ORDERED = /^\s*\d+[.)]\s+(.*)$/;
const FENCE = /^```\s*([\w-]*)\s*$/;

function listItem(line) {
  const bullet = line.match(BULLET);
  if (bullet) {
    return { ordered: false, text: bullet[1] };
  }
  const ordered = line.match(ORDERED);
  return ordered ? { ordered: true, text: ordered[1] } : null;
}

/** Split markdown source into a list of block objects. */
export function parseBlocks(source) {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = line.match(FENCE);
    if (fence) {
      const code = [];
      i += 1;
      while (i < lines.length && !FENCE.test(lines[i])) {
        code.push(lines[i]);
        i += 1;
      }
      blocks.push({ type: 'code', lang: fence[1] || null, text: code.join('\n') });
      i += 1;
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      blocks.push({ type: 'heading', level: heading[1].length, text: heading[2] });
      i += 1;
      continue;
    }
    const item = listItem(line);
    if (item) {
      const items = [];
      while (i < lines.length && listItem(lines[i])?.ordered === item.ordered) {
        items.push(listItem(lines[i]).text);
        i += 1;
      }
      blocks.push({ type: 'list', ordered: item.ordered, items });
      continue;
    }
    if (line.startsWith('>')) {
      const quoted = [];
      while (i < lines.length && lines[i].startsWith('>')) {
        quoted.push(lines[i].replace(/^>\s?/, ''));
        i += 1;
      }
      blocks.push({ type: 'quote', children: parseBlocks(quoted.join('\n')) });
      continue;
    }
    if (!line.trim()) {
      i += 1;
      continue;
    }
    const para = [];
    while (i < lines.length && lines[i].trim() && !isBlockStart(lines[i])) {
      para.push(lines[i].trim());
      i += 1;
    }
    blocks.push({ type: 'paragraph', text: para.join(' ') });
  }
  return blocks;
}

const isBlockStart = (line) =>
  FENCE.test(line) || HEADING.test(line) || Boolean(listItem(line)) || line.startsWith('>');

function renderBlock(block, options) {
  switch (block.type) {
    case 'heading': {
      const id = options.headingIds ? ` id="${slugifyHeading(block.text)}"` : '';
      return `<h${block.level}${id}>${renderInline(block.text)}</h${block.level}>`;
    }
    case 'code': {
      const cls = block.lang ? ` class="language-${block.lang}"` : '';
      return `<pre><code${cls}>${escapeHtml(block.text)}</code></pre>`;
    }
    case 'list': {
      const tag = block.ordered ? 'ol' : 'ul';
      const items = block.items.map((text) => `<li>${renderInline(text)}</li>`).join('');
      return `<${tag}>${items}</${tag}>`;
    }
    case 'quote':
      return `<blockquote>${block.children.map((b) => renderBlock(b, options)).join('\n')}</blockquote>`;
    default:
      return `<p>${renderInline(block.text)}</p>`;
  }
}

/** Render markdown source to HTML, one block per line. */
export default function render(source, { headingIds = false } = {}) {
  return parseBlocks(source)
    .map((block) => renderBlock(block, { headingIds }))
    .join('\n');
}

/** The table of contents: every heading down to `maxLevel`, with its anchor. */
export function tableOfContents(source, maxLevel = 3) {
  const seen = new Map();
  return parseBlocks(source)
    .filter((block) => block.type === 'heading' && block.level <= maxLevel)
    .map((block) => {
      let slug = slugifyHeading(block.text);
      const count = seen.get(slug) ?? 0;
      seen.set(slug, count + 1);
      if (count) {
        slug = `${slug}-${count}`;
      }
      return { level: block.level, text: block.text, slug };
    });
}

/** The text without markup, blocks separated by blank lines. */
export function stripMarkdown(source) {
  const plain = (text) =>
    text
      .replace(/`([^`]+)`/g, '$1')
      .replace(/\*\*?([^*]+)\*\*?/g, '$1')
      .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1');
  const flatten = (blocks) =>
    blocks.map((block) => {
      if (block.type === 'list') return block.items.map(plain).join('\n');
      if (block.type === 'quote') return flatten(block.children);
      if (block.type === 'code') return block.text;
      return plain(block.text);
    }).join('\n\n');
  return flatten(parseBlocks(source));
}

export const wordCount = (source) => {
  const text = stripMarkdown(source).trim();
  return text ? text.split(/\s+/).length : 0;
};
