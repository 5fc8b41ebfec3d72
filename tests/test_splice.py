"""`PythonProject.replace_nodes` cuts out only the top-level statements that changed
(`_splice`) instead of cutting the whole file at every statement (`statement_codes`, code
generation of the whole module): the text must be the same either way, on real code."""

from __future__ import annotations

import shutil
from pathlib import Path

import libcst as cst
import pytest
from conftest import make_project

from taskforge.languages.python.delete import PythonProject

ROOT = Path(__file__).resolve().parent.parent
STUB = cst.IndentedBlock(body=[cst.parse_statement("raise NotImplementedError\n")])


def real_files() -> list[Path]:
    """Python files of every shape this repository holds: its own code and the samples'."""
    return sorted([*(ROOT / "taskforge").rglob("*.py"), *(ROOT / "sample_repos").rglob("*.py")])


def functions(module: cst.Module) -> list[cst.FunctionDef]:
    found: list[cst.FunctionDef] = []

    class Collect(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            found.append(node)

    module.visit(Collect())
    return found


def both_ways(project: PythonProject, path: str,
              changes: dict[cst.CSTNode, cst.CSTNode | None],
              monkeypatch: pytest.MonkeyPatch) -> tuple[str, str | None]:
    """(replace_nodes' text, the text of the whole-file cut), and whether the splice served."""
    spliced = project.replace_nodes(path, changes)
    with monkeypatch.context() as patched:
        patched.setattr(PythonProject, "_splice", lambda *_args: None)
        whole = project.replace_nodes(path, changes)
    return spliced, whole


@pytest.mark.slow  # ~30 s: about 1,700 cuts, each made both ways
def test_the_splice_gives_the_whole_file_cut_s_text_on_real_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = real_files()
    assert len(files) > 100
    root = tmp_path / "code"
    for file in files:
        dest = root / file.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, dest)
    project = PythonProject(root, (".",))
    served = compared = 0
    splice = PythonProject._splice

    def counted(self: PythonProject, *args: object) -> str | None:
        nonlocal served
        result = splice(self, *args)  # type: ignore[arg-type]
        served += result is not None
        return result

    monkeypatch.setattr(PythonProject, "_splice", counted)
    for file in files:
        path = file.relative_to(ROOT).as_posix()
        module = project.parse(path)
        if module is None:
            continue
        # every function stubbed, and the first and last top-level statement removed
        cases: list[dict[cst.CSTNode, cst.CSTNode | None]] = [
            {f: f.with_changes(body=STUB)} for f in functions(module)[:8]]
        cases += [{module.body[0]: None}, {module.body[-1]: None}] if len(module.body) > 1 else []
        for changes in cases:
            spliced, whole = both_ways(project, path, changes, monkeypatch)
            assert spliced == whole, (path, next(iter(changes)))
            compared += 1
    assert compared > 800
    assert served > 0.9 * compared  # the splice serves nearly every real case


@pytest.mark.parametrize("source", [
    # two identical top-level functions: a piece found twice, so the whole-file cut
    "X = 1\n\n\ndef f():\n    return 1\n\n\ndef f():\n    return 1\n",
    # no final newline: the statements' code is not the file's text to the last byte
    "def f():\n    return 1\n\n\ndef g():\n    return 2",
    # a function whose code also stands in a string before it
    'SOURCE = """\n\n\ndef f():\n    return 1\n"""\n\n\ndef f():\n    return 1\n',
])
def test_where_the_splice_cannot_be_exact_the_whole_file_is_cut(
        tmp_path: Path, source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_project(tmp_path, {"pkg/mod.py": source})
    project = PythonProject(root, (".",))
    module = project.parse("pkg/mod.py")
    assert module is not None
    naive = 0
    splice = PythonProject._splice
    for function in functions(module):
        # the splice declines each of these (the whole-file cut serves)
        assert splice(project, "pkg/mod.py", module, [
            s.with_changes(body=STUB) if s is function else s for s in module.body],
            {function: function.with_changes(body=STUB)}) is None
        changes: dict[cst.CSTNode, cst.CSTNode | None] = {function: function.with_changes(body=STUB)}
        spliced, whole = both_ways(project, "pkg/mod.py", changes, monkeypatch)
        assert spliced == whole
        assert "raise NotImplementedError" in spliced
        # Positive control: cut at the first place the function's code stands, the text
        # would differ (the string's copy stubbed, or the first of two functions twice).
        text, piece = project.text("pkg/mod.py"), module.code_for_node(function)
        if piece in text:
            start = text.find(piece)
            new = module.code_for_node(function.with_changes(body=STUB))
            naive += text[:start] + new + text[start + len(piece):] != whole
    assert naive or not source.endswith("\n")


def test_several_changes_at_once_and_a_byte_order_mark(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    source = ("# header\n\nimport os\n\n\ndef f():\n    return 1\n\n\nX = 1\n\n\n"
              "def g():\n    return os.sep\n\n\ndef h():\n    return 3\n")
    root = make_project(tmp_path, {"pkg/mod.py": source, "pkg/bom.py": "\ufeff" + source})
    project = PythonProject(root, (".",))
    module = project.parse("pkg/mod.py")
    assert module is not None
    f, _g, h = functions(module)
    constant = module.body[2]
    changes: dict[cst.CSTNode, cst.CSTNode | None] = {
        f: f.with_changes(body=STUB), constant: None, h: h.with_changes(body=STUB)}
    spliced, whole = both_ways(project, "pkg/mod.py", changes, monkeypatch)
    assert spliced == whole and "X = 1" not in spliced and spliced.count("raise Not") == 2
    assert "return os.sep" in spliced
    # A byte-order mark: libcst's code leaves it out, so the whole-file cut dropped it from
    # the file (a change the deletion never made); the splice keeps it.
    bom = project.parse("pkg/bom.py")
    assert bom is not None
    bf = functions(bom)[0]
    text = project.replace_nodes("pkg/bom.py", {bf: bf.with_changes(body=STUB)})
    assert text == "\ufeff" + source.replace("    return 1\n", "    raise NotImplementedError\n")
