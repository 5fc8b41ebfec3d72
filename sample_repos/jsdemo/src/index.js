// jsdemo: everything the submodules export, from one place.
export { default as render, escapeHtml, parseBlocks, renderInline, slugifyHeading, stripMarkdown,
  tableOfContents, wordCount } from './markdown.js';
export { Emitter, Store, applyMiddleware, combineReducers, createAction, createReducer, createStore,
  logger } from './store.js';
export { default as Duration, UNITS, formatDuration, humanizeRelative, normalizeUnit, parseDuration,
  parseIsoDuration, splitDuration, toIsoDuration } from './duration.js';
export { capitalize, dedent, pluralize, splitWords, template, toCamel, toKebab, truncate,
  wrap } from './text.js';
