"""`PythonProject.replace_nodes` cuts out only the nodes that changed inside a top-level
statement (`_splice_nested`: a method, not its class), or the top-level statements that
changed (`_splice`), instead of cutting the whole file at every statement (`statement_codes`,
code generation of the whole module): the text must be the same either way, on real code."""

from __future__ import annotations

import shutil
from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest
from conftest import make_project

from taskforge.languages.python.delete import PythonProject
from taskforge.languages.python.delete import project as project_module

ROOT = Path(__file__).resolve().parent.parent
STUB = cst.IndentedBlock(body=[cst.parse_statement("raise NotImplementedError\n")])


def real_files() -> list[Path]:
    """Python files of every shape this repository holds: its own code and the samples'."""
    return sorted([*(ROOT / "taskforge").rglob("*.py"), *(ROOT / "sample_repos").rglob("*.py")])


def functions(module: cst.Module) -> list[cst.FunctionDef]:
    return [node for node in m.findall(module, m.FunctionDef()) if isinstance(node, cst.FunctionDef)]


def branches(module: cst.Module) -> list[cst.If]:
    return [node for node in m.findall(module, m.If()) if isinstance(node, cst.If)]


def both_ways(project: PythonProject, path: str,
              changes: dict[cst.CSTNode, cst.CSTNode | None],
              monkeypatch: pytest.MonkeyPatch) -> tuple[str, str | None]:
    """(replace_nodes' text, the text of the whole-file cut), and whether the splice served."""
    spliced = project.replace_nodes(path, changes)
    with monkeypatch.context() as patched:
        patched.setattr(PythonProject, "_splice", lambda *_args: None)
        patched.setattr(PythonProject, "_splice_nested", lambda *_args: None)
        whole = project.replace_nodes(path, changes)
    return spliced, whole


@pytest.mark.slow  # about 2,000 cuts, each made both ways
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
    served = {"_splice": 0, "_splice_nested": 0}
    compared = nested = 0

    def counted(name: str):
        splice = getattr(PythonProject, name)

        def count(self: PythonProject, *args: object) -> str | None:
            result = splice(self, *args)
            served[name] += result is not None
            return result
        return count

    for name in served:
        monkeypatch.setattr(PythonProject, name, counted(name))
    for file in files:
        path = file.relative_to(ROOT).as_posix()
        module = project.parse(path)
        if module is None:
            continue
        # every function stubbed, and the first and last top-level statement removed
        cases: list[dict[cst.CSTNode, cst.CSTNode | None]] = [
            {f: f.with_changes(body=STUB)} for f in functions(module)[:8]]
        # a branch's body (remove-branch's kind of change), at whatever depth it stands
        cases += [{b: b.with_changes(body=STUB)} for b in branches(module)[:4]]
        cases += [{module.body[0]: None}, {module.body[-1]: None}] if len(module.body) > 1 else []
        for changes in cases:
            spliced, whole = both_ways(project, path, changes, monkeypatch)
            assert spliced == whole, (path, next(iter(changes)))
            compared += 1
            nested += next(iter(changes)) not in module.body
    assert compared > 800 and nested > 500
    # the splices serve nearly every real case; a method's, the nested one
    assert sum(served.values()) > 0.9 * compared
    assert served["_splice_nested"] > 0.9 * nested


@pytest.mark.parametrize("source", [
    # two identical top-level functions: a piece found twice, so the whole-file cut
    "X = 1\n\n\ndef f():\n    return 1\n\n\ndef f():\n    return 1\n",
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
    assert naive


def libcst_code(project: PythonProject, path: str,
                changes: dict[cst.CSTNode, cst.CSTNode | None],
                monkeypatch: pytest.MonkeyPatch) -> str:
    """`replace_nodes`' text with every splice and the statement cut declining: libcst's
    code of the whole changed module, the truth a splice must match."""
    with monkeypatch.context() as patched:
        for name in ("_splice", "_splice_nested", "_cut_at_statements"):
            patched.setattr(PythonProject, name, lambda *_args: None)
        return project.replace_nodes(path, changes)


def test_a_file_without_a_final_newline_is_spliced_and_stays_without(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file without a final newline (boltons' strutils) is its statements' code but for
    the newline libcst generates last and drops: the splices work on the text with it and
    drop it again, rather than generating the whole module's code for every deletion. The
    text is libcst's own code of the changed module, byte for byte, on real files with
    their final newline taken off (and each splice, not the whole-module fallback, served
    them). Positive control: without dropping it again, the text would end in a newline
    the file never had."""
    files = [f for f in real_files() if f.stat().st_size > 2000][:12]
    assert len(files) == 12
    root = tmp_path / "code"
    for file in files:
        dest = root / file.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(file.read_text().rstrip("\n"))
    project = PythonProject(root, (".",))
    whole = 0

    def no_whole_module(*_args: object) -> str:
        nonlocal whole
        whole += 1
        return ""

    compared = 0
    for file in files:
        path = file.relative_to(ROOT).as_posix()
        module = project.parse(path)
        assert module is not None and not module.has_trailing_newline
        cases: list[dict[cst.CSTNode, cst.CSTNode | None]] = [
            {f: f.with_changes(body=STUB)} for f in functions(module)[-3:]]
        cases += [{module.body[-1]: None}, {module.body[0]: None}]
        for changes in cases:
            truth = libcst_code(project, path, changes, monkeypatch)
            with monkeypatch.context() as patched:
                patched.setattr(cst.Module, "code", property(no_whole_module))
                text = project.replace_nodes(path, changes)
            assert text == truth and not text.endswith("\n"), (path, next(iter(changes)))
            with monkeypatch.context() as patched:
                patched.setattr(project_module, "_as_file", lambda _module, text: text)
                assert project.replace_nodes(path, changes) == truth + "\n"
            compared += 1
    assert compared >= 4 * len(files) and whole == 0


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


def test_a_method_is_cut_within_its_own_class(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Two classes with the same method: each stub lands in its own class (the search is
    bounded by the class's lines). A class whose string holds its method's code: the
    nested splice declines, and the text is still the whole-file cut's. Positive control:
    cut at the first place the method's code stands, the string would be stubbed."""
    method = "    def size(self):\n        return 1\n"
    source = (f"class A:\n{method}\n\nclass B:\n{method}\n\n"
              f'class C:\n    DOC = """\n{method}"""\n\n{method}')
    root = make_project(tmp_path, {"pkg/mod.py": source})
    project = PythonProject(root, (".",))
    module = project.parse("pkg/mod.py")
    assert module is not None
    a_size, b_size, c_size = functions(module)
    nested = PythonProject._splice_nested
    for function, name in ((a_size, "A"), (b_size, "B")):
        changes: dict[cst.CSTNode, cst.CSTNode | None] = {function: function.with_changes(body=STUB)}
        text = nested(project, "pkg/mod.py", module, changes)
        assert text is not None
        spliced, whole = both_ways(project, "pkg/mod.py", changes, monkeypatch)
        assert text == spliced == whole
        stubbed = text.split(f"class {name}:\n", 1)[1].split("\n\n\n", 1)[0]
        assert "raise NotImplementedError" in stubbed and text.count("raise NotImplemented") == 1
    changes = {c_size: c_size.with_changes(body=STUB)}
    assert nested(project, "pkg/mod.py", module, changes) is None
    spliced, whole = both_ways(project, "pkg/mod.py", changes, monkeypatch)
    assert spliced == whole and whole.endswith("    def size(self):\n        raise NotImplementedError\n")
    assert f'DOC = """\n{method}"""' in whole
    text = project.text("pkg/mod.py")
    start = text.find(method, text.find("class C:"))
    naive = text[:start] + method.replace("return 1", "raise NotImplementedError") \
        + text[start + len(method):]
    assert naive != whole and f'DOC = """\n{method}"""' not in naive


def test_an_elif_is_not_taken_for_a_later_if(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """libcst generates an `elif` branch alone as `if`, which is not its text; where an `if`
    of the same test and body stands further on in the function, that text is found once
    within the function. The nested splice must not cut there (the found text must hold
    the node's own place): it declines, and the whole-file cut stubs the `elif`. Positive
    control: cut where the generated text was found, the later `if` would be stubbed."""
    source = ("def f(x, y):\n    if x:\n        return 1\n    elif y:\n        return 2\n"
              "    if y:\n        return 2\n    return 3\n")
    root = make_project(tmp_path, {"pkg/mod.py": source})
    project = PythonProject(root, (".",))
    module = project.parse("pkg/mod.py")
    assert module is not None
    first, later = branches(module)[0], branches(module)[-1]
    elif_branch = first.orelse
    assert isinstance(elif_branch, cst.If) and elif_branch is not later
    changes: dict[cst.CSTNode, cst.CSTNode | None] = {elif_branch: elif_branch.with_changes(body=STUB)}
    assert PythonProject._splice_nested(project, "pkg/mod.py", module, changes) is None
    spliced, whole = both_ways(project, "pkg/mod.py", changes, monkeypatch)
    assert spliced == whole == source.replace("    elif y:\n        return 2\n",
                                              "    elif y:\n        raise NotImplementedError\n")
    text = project.text("pkg/mod.py")
    piece = "    if y:\n        return 2\n"
    assert module.code_for_node(elif_branch).startswith("if y:") and text.count(piece) == 1
    start = text.find(piece)
    naive = text[:start] + piece.replace("return 2", "raise NotImplementedError") \
        + text[start + len(piece):]
    assert naive != whole
