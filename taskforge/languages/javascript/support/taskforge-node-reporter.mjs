// taskforge's reporter for node's built-in test runner (`node --test --test-reporter=<this>`).
//
// Node 20's JUnit reporter names no file, so two tests of the same name in two files could not
// be told apart. This one writes one JSON object per line: every test's file, its suite path
// (from the `test:start` events, which come in order per file), its status, its duration, and
// the coverage key the preload module (taskforge-node-coverage.mjs) attached as a diagnostic.
// It runs in the runner's parent process, where no test code runs (each file is a child process).
// A failed test's record holds what its failing assertion compared (taskforge-compared.cjs).
import { createRequire } from 'node:module';

const { compared } = createRequire(import.meta.url)('./taskforge-compared.cjs');

export default async function* reporter(source) {
  const stacks = new Map(); // file -> names of the tests started, by nesting level
  const last = new Map(); // file -> the last test reported there (for its diagnostics)
  for await (const event of source) {
    const data = event.data ?? {};
    const file = data.file;
    if (event.type === 'test:start' && file) {
      const stack = stacks.get(file) ?? [];
      stack.length = data.nesting;
      stack[data.nesting] = data.name;
      stacks.set(file, stack);
    } else if ((event.type === 'test:pass' || event.type === 'test:fail') && file) {
      const details = data.details ?? {};
      const stack = stacks.get(file) ?? [];
      const error = details.error;
      const record = {
        file,
        path: [...stack.slice(0, data.nesting), data.name],
        line: data.line ?? null,
        column: data.column ?? null,
        nesting: data.nesting,
        type: details.type ?? 'test',
        status: event.type === 'test:pass' ? 'passed' : 'failed',
        skip: data.skip === undefined ? false : (data.skip === true ? true : String(data.skip)),
        todo: data.todo === undefined ? false : true,
        seconds: typeof details.duration_ms === 'number' ? details.duration_ms / 1000 : 0,
        error: error ? String(error.cause?.message ?? error.message ?? error).slice(0, 500) : null,
        compared: event.type === 'test:fail' && error ? compared(error) : null,
      };
      last.set(file, record);
      yield JSON.stringify(record) + '\n';
    } else if (event.type === 'test:diagnostic' && file) {
      const message = String(data.message ?? '');
      const record = last.get(file);
      if (message.startsWith('taskforge-coverage ') && record && record.nesting === data.nesting
          && record.line === data.line) {
        yield JSON.stringify({ coverage: message.slice(19), file, path: record.path }) + '\n';
      }
    }
  }
}
