"""JavaScript/TypeScript deletions with tree-sitter on the sample projects: every result
parses, the signature stays, applying is deterministic, and a record's trivial solutions are
exactly what the strategy writes. No node needed: the baseline is one that lets everything
through."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import REPO_ROOT, make_project

from taskforge.errors import Rejected
from taskforge.languages import language_named
from taskforge.languages.javascript.delete.project import JavaScriptProject
from taskforge.languages.javascript.delete.syntax import STUB, functions, parses_cleanly
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import Baseline, Candidate, Deletion
from taskforge.patches import apply_patch, diff_texts
from taskforge.statement import problem_statement

JS = language_named("javascript")
SAMPLES = [REPO_ROOT / "sample_repos" / "jsdemo", REPO_ROOT / "sample_repos" / "tsdemo"]
EVERYTHING = SelectOptions(min_covering_tests=0, min_body_lines=1)
OPTIONS = TaskOptions()


def everything_covered(project: JavaScriptProject) -> Baseline:
    """A baseline in which one stable test ran every line of every source file."""
    coverage = {path: {line: (0,) for line in range(1, project.text(path).count("\n") + 2)}
                for path in project.source_files}
    return Baseline(key="k", tests=("t::x",), stable=("t::x",), flaky=(), failing=(),
                    run_seconds=(1.0,), coverage=coverage)


@pytest.mark.parametrize("root", SAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("name", sorted(JS.strategies))
def test_every_candidate_applies_and_parses(root: Path, name: str) -> None:
    project = JavaScriptProject(root)
    strategy = JS.strategy(name)
    assert strategy is not None
    candidates = strategy.candidates(project, everything_covered(project), EVERYTHING)
    assert candidates, f"{name} finds nothing in {root.name}"
    for candidate in candidates:
        deletion = strategy.apply(project, candidate, OPTIONS)
        again = strategy.apply(project, candidate, OPTIONS)
        assert deletion.new_texts == again.new_texts  # deterministic
        for path, text in deletion.new_texts.items():
            assert text != project.text(path)
            assert parses_cleanly(path, text.encode()), f"{candidate.symbol}: {path}"
        for body in JS.null_bodies:
            for path, text in strategy.apply(project, candidate, OPTIONS,
                                             body=body).new_texts.items():
                assert parses_cleanly(path, text.encode())


@pytest.mark.parametrize("root", SAMPLES, ids=lambda p: p.name)
@pytest.mark.parametrize("name,least", [("stub-function", 3), ("stub-class", 3),
                                        ("feature-cluster", 1)])
def test_null_body_rewrite_is_what_the_strategy_writes(root: Path, name: str, least: int,
                                                       tmp_path: Path) -> None:
    """`with_null_body` on a record's deletion patch, applied to the original, gives for
    every function of the sample the text of `apply(body=...)`: what `taskforge verify`
    scores is what `generate` scored. (As a patch it may differ: a diff of its own lines
    `return true;` up with a function's last line that returns so.)"""
    project = JavaScriptProject(root)
    strategy = JS.strategy(name)
    assert strategy is not None
    candidates = strategy.candidates(project, everything_covered(project), EVERYTHING)
    assert len(candidates) >= least
    for n, candidate in enumerate(candidates):
        task = strategy.apply(project, candidate, OPTIONS)
        patch = diff_texts({p: (project.text(p), t) for p, t in task.new_texts.items()})
        assert STUB in patch
        for body in JS.null_bodies:
            trivial = strategy.apply(project, candidate, OPTIONS, body=body)
            workspace = tmp_path / f"{n}-{body}"
            for path in task.new_texts:
                (workspace / path).parent.mkdir(parents=True, exist_ok=True)
                (workspace / path).write_text(project.text(path))
            apply_patch(workspace, JS.with_null_body(patch, body))
            assert {p: (workspace / p).read_text() for p in trivial.new_texts} == \
                trivial.new_texts, (candidate.symbol, body)


def test_stub_keeps_signatures_types_and_documentation(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"src/a.ts": '''\
        /** Adds two numbers. */
        export function add<T extends number>(a: T, b: T = 1 as T): number {
          const sum = a + b;
          return sum;
        }

        export const twice = async (x: string): Promise<string> => {
          const y = x + x;
          return y;
        };

        export default class Box<T> {
          private items: T[] = [];
          constructor(first: T) {
            this.items.push(first);
          }
          get size(): number {
            const n = this.items.length;
            return n;
          }
          static of<U>(x: U): Box<U> {
            const box = new Box(x);
            return box;
          }
        }
        '''})
    project = JavaScriptProject(root)
    found = {f.qualname: f for f in functions(project.tree("src/a.ts"))}
    assert set(found) == {"add", "twice", "Box.constructor", "Box.size[get]", "Box.of"}
    strategy = JS.strategy("stub-function")
    assert strategy is not None
    by_symbol = {c.symbol: c for c in strategy.candidates(project, everything_covered(project),
                                                           EVERYTHING)}
    text = strategy.apply(project, by_symbol["src/a.add"], OPTIONS).new_texts["src/a.ts"]
    assert "export function add<T extends number>(a: T, b: T = 1 as T): number {\n" \
        f"  {STUB}\n}}" in text
    assert "/** Adds two numbers. */" in text and "const sum" not in text
    text = strategy.apply(project, by_symbol["src/a.Box.size[get]"], OPTIONS).new_texts["src/a.ts"]
    assert f"  get size(): number {{\n    {STUB}\n  }}" in text
    dropped = strategy.apply(project, by_symbol["src/a.add"],
                             TaskOptions(keep_docstrings=False)).new_texts["src/a.ts"]
    assert "Adds two numbers" not in dropped


def test_remove_function_leaves_a_bare_stub_where_the_name_is_used(tmp_path: Path) -> None:
    root = make_project(tmp_path, {
        "src/a.js": '''\
            export function used(a, b) {
              const c = a * b;
              return c + 1;
            }

            export function unused(a) {
              const b = a + 1;
              return b * 2;
            }

            export const last = 1;
            ''',
        "src/b.js": "import { used } from './a.js';\nexport const x = used(1, 2);\n"})
    project = JavaScriptProject(root)
    strategy = JS.strategy("remove-function")
    assert strategy is not None
    by_symbol = {c.symbol: c for c in strategy.candidates(project, everything_covered(project),
                                                           EVERYTHING)}
    used = strategy.apply(project, by_symbol["src/a.used"], OPTIONS)
    assert used.new_texts["src/a.js"].startswith(
        f"export function used(...args) {{\n  {STUB}\n}}\n\nexport function unused(a)")
    assert used.statement_facts["state"] == "stub"
    unused = strategy.apply(project, by_symbol["src/a.unused"], OPTIONS)
    assert "unused" not in unused.new_texts["src/a.js"]
    assert unused.new_texts["src/a.js"].endswith("}\n\nexport const last = 1;\n")
    with pytest.raises(Rejected, match="used by"):
        strategy.apply(project, by_symbol["src/a.used"], TaskOptions(broken_imports="reject"))


def test_a_file_tree_sitter_cannot_parse_is_skipped(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"src/ok.js": "export function f(a) {\n  return a;\n}\n",
                                   "src/bad.js": "export function (\n"})
    project = JavaScriptProject(root)
    assert project.tree("src/bad.js") is None and "src/bad.js" in project.skipped
    assert project.tree("src/ok.js") is not None


# ---------------------------------------------------------------- feature-cluster

def _candidates(strategy_name: str, project: JavaScriptProject) -> dict[str, Candidate]:
    strategy = JS.strategy(strategy_name)
    assert strategy is not None
    return {c.symbol: c for c in strategy.candidates(project, everything_covered(project),
                                                     EVERYTHING)}


def _cluster(project: JavaScriptProject, symbol: str, body: str = "raise",
             options: TaskOptions = OPTIONS) -> Deletion:
    strategy = JS.strategy("feature-cluster")
    assert strategy is not None
    return strategy.apply(project, _candidates("feature-cluster", project)[symbol], options,
                          body=body)


def _twice(tmp_path: Path, root: Path, symbol: str) -> dict[str, str]:
    """Apply the candidate, then apply it again to its own result (the entry found by
    name: helpers above it moved it up): both texts agree."""
    project = JavaScriptProject(root)
    candidate = _candidates("feature-cluster", project)[symbol]
    once = _cluster(project, symbol).new_texts
    assert once == _cluster(project, symbol).new_texts  # deterministic
    copy = tmp_path / "again"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("node_modules"))
    for rel, text in once.items():
        (copy / rel).write_text(text)
    result = JavaScriptProject(copy)
    qualname = symbol.removeprefix(result.module_name(candidate.path) + ".")
    moved = next(f for f in functions(result.tree(candidate.path)) if f.qualname == qualname)
    strategy = JS.strategy("feature-cluster")
    assert strategy is not None
    again = strategy.apply(result, replace(candidate, start_line=moved.start_line), OPTIONS)
    assert again.new_texts == once
    assert again.statement_facts["helpers"] == 0  # nothing left to remove
    return once


def test_feature_cluster_finds_the_samples_clusters() -> None:
    """What the rules take in the samples, and what they leave: parseBlocks' `listItem` is
    also used by `isBlockStart` at module level; the Store's `#commit` by `dispatch` and
    `undo`; parseQuery's `assign` is a word other files use (`Object.assign`)."""
    js, ts = (JavaScriptProject(root) for root in SAMPLES)
    assert {s: c.symbols for s, c in _candidates("feature-cluster", js).items()} == {
        "src/markdown.render": 2}
    assert {s: c.symbols for s, c in _candidates("feature-cluster", ts).items()} == {
        "src/query.parseQuery": 2, "src/query.stringifyQuery": 2,
        "src/semver.SemVer.compare": 2}
    candidate = _candidates("feature-cluster", js)["src/markdown.render"]
    assert candidate.kind == "cluster" and candidate.import_time  # definitions are removed
    # render's body (3 lines) and renderBlock whole (21 lines)
    assert candidate.body_lines == 3 + 21


def test_feature_cluster_of_jsdemo_render(tmp_path: Path) -> None:
    root = SAMPLES[0]
    original = (root / "src/markdown.js").read_text()
    text = _twice(tmp_path, root, "src/markdown.render")["src/markdown.js"]
    helper = original[original.index("function renderBlock("):original.index(
        "/** Render markdown source")]
    assert helper.startswith("function renderBlock(block, options) {\n  switch")
    assert text == original.replace(helper, "").replace(
        "  return parseBlocks(source)\n    .map((block) => renderBlock(block, { headingIds }))\n"
        "    .join('\\n');\n", f"  {STUB}\n")
    assert "renderBlock" not in text and parses_cleanly("src/markdown.js", text.encode())
    deletion = _cluster(JavaScriptProject(root), "src/markdown.render")
    assert [(d.symbol, d.kind) for d in deletion.deleted] == [
        ("src/markdown.render", "function"), ("src/markdown.renderBlock", "function")]
    facts = deletion.statement_facts
    assert (facts["kind"], facts["helpers"], facts["call_depth"]) == ("cluster", 1, 1)
    statement = problem_statement(facts, ["test/markdown.test.js::render > renders headings"])
    assert "1 private helper it relied on was removed" in statement
    assert "renderBlock" not in statement and "```javascript" in statement


def test_feature_cluster_of_a_typescript_method_reaches_a_module_function(
        tmp_path: Path) -> None:
    """`SemVer.compare` calls the module's own `comparePrerelease`: the method is stubbed
    with its types, the function goes."""
    root = SAMPLES[1]
    text = _twice(tmp_path, root, "src/semver.SemVer.compare")["src/semver.ts"]
    assert f"  compare(other: SemVer | string): -1 | 0 | 1 {{\n    {STUB}\n  }}\n" in text
    assert "comparePrerelease" not in text
    assert "  toString(): string {" in text and "export function parse(" in text
    # a recursive helper (encodePairs calls itself) is the entry's alone all the same
    text = _twice(tmp_path / "q", root, "src/query.stringifyQuery")["src/query.ts"]
    assert "encodePairs" not in text and "export function getParam(" in text


CLUSTER_JS = """\
    import { readFileSync } from 'node:fs';

    function clean(word) {
      const stripped = word.trim();
      return lower(stripped);
    }

    function lower(word) {
      const lowered = word.toLowerCase();
      return lowered;
    }

    function shared(words) {
      return [...words].sort();
    }

    function testedDirectly(words) {
      return Array.from(words);
    }

    function atImport(x) {
      return x + 1;
    }

    const TABLE = { inc: atImport };

    /** Cleaned, sorted words. */
    export function normalize(words) {
      const cleaned = words.map((w) => clean(w));
      const ordered = shared(cleaned);
      return testedDirectly(atImport(ordered));
    }

    export function other(words) {
      return shared(words);
    }

    export class Report {
      #title = 'report';

      render() {
        const head = this.#header();
        return head + this._body();
      }

      #header() {
        return '# ' + this.#title;
      }

      /** The rows, one a line. */
      _body() {
        const lines = this.rows.map(String);
        return lines.join('\\n');
      }

      _unused() {
        return readFileSync;
      }

      summary() {
        return this.#header();
      }
    }
    """


def test_feature_cluster_takes_the_helpers_only_the_entry_reaches(tmp_path: Path) -> None:
    """Python's rules (tests/test_strategies.py's CLUSTER): `shared` is also `other`'s,
    `atImport` is used at import time, a test names `testedDirectly`; `clean` and the
    `lower` only it calls go. A method's helpers are its class's private methods."""
    root = make_project(tmp_path, {
        "src/mod.js": CLUSTER_JS,
        "test/mod.test.js": "import { testedDirectly } from '../src/mod.js';\n"})
    project = JavaScriptProject(root)
    found = _candidates("feature-cluster", project)
    assert set(found) == {"src/mod.normalize", "src/mod.Report.render"}
    deletion = _cluster(project, "src/mod.normalize")
    assert [d.symbol for d in deletion.deleted] == [
        "src/mod.normalize", "src/mod.clean", "src/mod.lower"]
    assert deletion.statement_facts["call_depth"] == 2
    text = deletion.new_texts["src/mod.js"]
    assert text.startswith("import { readFileSync } from 'node:fs';\n\nfunction shared(words)")
    assert f"/** Cleaned, sorted words. */\nexport function normalize(words) {{\n  {STUB}\n}}" \
        in text
    # `#header` is `summary`'s too; `_body` goes with its JSDoc, `_unused` (unreached) stays
    text = _cluster(project, "src/mod.Report.render").new_texts["src/mod.js"]
    assert f"  render() {{\n    {STUB}\n  }}\n\n  #header() {{" in text
    assert "_body" not in text and "The rows" not in text and "  _unused() {" in text
    # with the documentation dropped (`task.keep_docstrings: false`)
    dropped = _cluster(project, "src/mod.normalize",
                       options=TaskOptions(keep_docstrings=False)).new_texts["src/mod.js"]
    assert "Cleaned, sorted words" not in dropped and parses_cleanly("src/mod.js",
                                                                     dropped.encode())


def test_feature_cluster_leaves_exported_overloaded_and_shared_helpers(tmp_path: Path) -> None:
    root = make_project(tmp_path, {"src/a.ts": """\
        function listed(x: number): number {
          const y = x * 2;
          return y;
        }
        export { listed as twice };

        function overloaded(x: string): string;
        function overloaded(x: number): number;
        function overloaded(x: any): any {
          const y = x;
          return y;
        }

        export class Box {
          private grow(n: number): number {
            return n + 1;
          }

          private shrink(n: number): number {
            return n - 1;
          }

          size(n: number): number {
            const a = this.grow(n);
            return listed(a) + overloaded(a);
          }

          resize(n: number): number {
            const a = this.shrink(n);
            return a * 2;
          }

          field = this.shrink(0);
        }
        """})
    project = JavaScriptProject(root)
    # `listed` is exported under another name, `overloaded` has signatures besides its
    # implementation, `grow` is Box.size's alone: the one cluster; `shrink` is used by a
    # field initializer (module-level code of the class)
    found = _candidates("feature-cluster", project)
    assert set(found) == {"src/a.Box.size"}
    deletion = _cluster(project, "src/a.Box.size")
    assert [d.symbol for d in deletion.deleted] == ["src/a.Box.size", "src/a.Box.grow"]
    text = deletion.new_texts["src/a.ts"]
    assert "private grow" not in text and "private shrink(n: number): number {" in text
    assert f"  size(n: number): number {{\n    {STUB}\n  }}" in text


def test_feature_cluster_trivial_solutions_keep_the_helpers_out(tmp_path: Path) -> None:
    project = JavaScriptProject(SAMPLES[1])
    for body, written in (("empty", ""), ("return-undefined", "return undefined;")):
        text = _cluster(project, "src/semver.SemVer.compare", body=body).new_texts["src/semver.ts"]
        assert f"  compare(other: SemVer | string): -1 | 0 | 1 {{\n    {written}\n  }}" in text
        assert "comparePrerelease" not in text and STUB not in text


def test_feature_cluster_keeps_a_helper_the_signature_names(tmp_path: Path) -> None:
    """The entry's signature stays in the task: a helper its default value or its type
    names stays too (Python: defaults and annotations belong to the code around the def)."""
    root = make_project(tmp_path, {"src/a.ts": """\
        function fallback(): number {
          const n = 1;
          return n;
        }

        function scale(x: number): number {
          const y = x * 3;
          return y;
        }

        function double(x: number): number {
          const y = x * 2;
          return y;
        }

        export function measure(x: number = fallback()): ReturnType<typeof scale> {
          const y = scale(double(x));
          return y + fallback();
        }
        """})
    deletion = _cluster(JavaScriptProject(root), "src/a.measure")
    assert [d.symbol for d in deletion.deleted] == ["src/a.measure", "src/a.double"]
    text = deletion.new_texts["src/a.ts"]
    assert "function fallback()" in text and "function scale(" in text


def test_feature_cluster_helpers_bound_to_names(tmp_path: Path) -> None:
    """A helper may be a function expression or an arrow bound to a `const`: its own name
    (the declarator's, and a named expression's) is no use of it."""
    root = make_project(tmp_path, {"src/a.js": """\
        const named = function inner(x) {
          const y = x + 1;
          return y;
        };

        const arrow = (x) => {
          const y = x * 2;
          return y;
        };

        export function main(x) {
          const z = named(arrow(x));
          return z * 2;
        }
        """})
    deletion = _cluster(JavaScriptProject(root), "src/a.main")
    assert [d.symbol for d in deletion.deleted] == ["src/a.main", "src/a.named", "src/a.arrow"]
    # (removal_span keeps the blank line after a definition that starts the file)
    assert deletion.new_texts["src/a.js"] == f"\nexport function main(x) {{\n  {STUB}\n}}\n"
