"""JavaScript/TypeScript deletions with tree-sitter on the sample projects: every result
parses, the signature stays, applying is deterministic, and a record's trivial solutions are
exactly what the strategy writes. No node needed: the baseline is one that lets everything
through."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO_ROOT, make_project

from taskforge.errors import Rejected
from taskforge.languages import language_named
from taskforge.languages.javascript.delete.project import JavaScriptProject
from taskforge.languages.javascript.delete.syntax import STUB, functions, parses_cleanly
from taskforge.languages.strategy import SelectOptions, TaskOptions
from taskforge.model import Baseline
from taskforge.patches import diff_texts

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
@pytest.mark.parametrize("name", ["stub-function", "stub-class"])
def test_null_body_rewrite_is_what_the_strategy_writes(root: Path, name: str) -> None:
    """`with_null_body` on a record's deletion patch gives, for every function of the
    sample, the patch of `apply(body=...)`: what `taskforge verify` scores is what
    `generate` scored."""
    project = JavaScriptProject(root)
    strategy = JS.strategy(name)
    assert strategy is not None
    candidates = strategy.candidates(project, everything_covered(project), EVERYTHING)
    assert len(candidates) >= 3
    for candidate in candidates:
        task = strategy.apply(project, candidate, OPTIONS)
        patch = diff_texts({p: (project.text(p), t) for p, t in task.new_texts.items()})
        assert STUB in patch
        for body in JS.null_bodies:
            trivial = strategy.apply(project, candidate, OPTIONS, body=body)
            expected = diff_texts({p: (project.text(p), t)
                                   for p, t in trivial.new_texts.items()})
            assert JS.with_null_body(patch, body) == expected, (candidate.symbol, body)


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
