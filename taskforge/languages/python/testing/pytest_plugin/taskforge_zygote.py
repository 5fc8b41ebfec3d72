"""A warm pytest process: interpreter started and pytest imported once, forked for each run.

Started by taskforge (`testing/zygote.py`) inside a sandbox with the environment's
interpreter; it must import nothing from taskforge and, above all, nothing of the project
under test: each run is a child forked from this state that imports the project's code
anew from its own workspace, as a fresh `python -m pytest` would. (It imports the
environment's pytest plugins and what they import, the plugins' own modules through
pytest's assertion rewriter as a run would rewrite them; a run whose own paths hold a
module of any of them, as the project's would, or that may load or rewrite them otherwise,
drops them all first.) What the fork saves is the interpreter's start, pytest's import
(about 0.35 s a run on this machine), the plugins' and, where the run's arguments allow, the
configuration `get_config` builds before it reads anything of the run (`_config_template`);
what a run does is unchanged: its working directory,
environment, `sys.path` and `sys.argv` are what the fresh process would have had, and
`python -m pytest` runs through runpy as `-m` does.

Protocol: one JSON object a line. Jobs come in on the FIFO given first, results go out on
the second: `{"ready": true, "preloaded", "refused", "unfit"}` once pytest is imported (and,
given a third argument, the environment's modules that qualify: `_import_environment`),
then per job `{"id", "exit_code", "timed_out", "seconds", "template", "imported", "fresh"}`
("template": the run's `get_config` was the one built here, `_config_template`; "imported":
the environment's modules its collection imported, `_environment_imports`; "fresh": why the
run could not use this zygote's environment modules, which its results must not be read
for). A job is `{"id", "cwd", "env", "args", "timeout", "log", "report"}`: `args` are
pytest's arguments, `log` the file its output goes to, `report` where the child leaves what
the answer says of it. The run's whole process group is killed when it ends or times out.
End of the jobs FIFO ends the server, as does an owner gone before the server opened its
ends (`_open_ends`).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import sys
import sysconfig
import time
from typing import TextIO

import pytest  # the point of this process: imported once, before any fork


def _import_pytests_own() -> None:
    """What every run imports besides `pytest` and the project: pytest's built-in plugins and
    the standard modules they pull in (~10 ms a run; `pdb` and `faulthandler`, which the
    debugging and faulthandler plugins import as they configure, ~2 ms more), and the one
    regular expression they compile in every run. None of them reads the environment or the
    working directory on import, so a run sees what it would have imported itself.
    The environment's own plugins come next (`_preload_plugins`); `readline` is left to the
    run (it reads HOME's .inputrc; pdb imports it only when a debugger starts)."""
    from _pytest.config import default_plugins

    names = [f"_pytest.{name}" for name in default_plugins]
    for name in (*names, "unittest", "xml.etree.ElementTree", "tomllib", "difflib", "pickle",
                 "pdb", "faulthandler"):
        with contextlib.suppress(ImportError):  # an older pytest or Python lacks some
            importlib.import_module(name)
    # The JUnit XML report escapes every test's name with a regular expression of large
    # character ranges that each run compiled anew (~3 ms): compiled once here, `re`'s cache
    # hands it to every run, as it would a second use in one process.
    with contextlib.suppress(Exception):
        from _pytest.junitxml import bin_xml_escape

        bin_xml_escape("")


def _import_taskforges_own() -> frozenset[str]:
    """The modules beside this one that a run imports from taskforge's plugin directory and
    that read nothing at import: the state watch (`taskforge_state`, every confirmation run
    over part of a suite). Runs may not write bytecode, so each compiled it anew (~2 ms); a
    run that would find another module of that name first drops it (`_forget_own`)."""
    with contextlib.suppress(ImportError):
        import taskforge_state  # noqa: F401
        return frozenset({"taskforge_state"})
    return frozenset()


# taskforge's plugins a run loads with `-p`, which pytest marks for assertion rewriting.
_OWN_PLUGINS = ("taskforge_pytest_plugin", "taskforge_screen")


def _rewrite_own_plugins() -> dict[str, tuple[bytes, object]]:
    """taskforge's `-p` plugins as pytest's assertion rewriter makes them for a run, made
    here once: {source path: (its bytes, code)}. A sandboxed run reads them from a read-only
    directory, where pytest can leave no rewritten bytecode, so every run parsed, rewrote
    and compiled the plugin's ~650 lines again (~15-20 ms of a boltons confirmation run
    under bwrap, a third of what it spent outside pytest's session). A run is given the
    code only for the very file it reads, holding the same bytes (`_serve_own_plugins`), as
    pytest's own cache checks a source's hash. Only a module without `assert` is made here:
    a run's settings (`enable_assertion_pass_hook`) could rewrite one otherwise. The word
    anywhere, a comment's too, counts (no assert statement is written without it; parsing
    the two files to look took ~11 ms of every zygote's start). Empty where this pytest's
    rewriter lacks these functions."""
    try:
        import re
        from importlib.machinery import PathFinder
        from pathlib import Path

        # `_read_pyc` is what each run's child stands in for: both must exist
        from _pytest.assertion.rewrite import _read_pyc, _rewrite_test  # noqa: F401
    except ImportError:
        return {}
    made: dict[str, tuple[bytes, object]] = {}
    for name in _OWN_PLUGINS:
        spec = PathFinder.find_spec(name, sys.path)
        if spec is None or not spec.origin:
            continue
        path = Path(spec.origin)
        try:
            source = path.read_bytes()
            if re.search(rb"\bassert\b", source):
                continue
            _stamp, code = _rewrite_test(path, None)
            if path.read_bytes() != source:  # changed meanwhile: which bytes made it?
                continue
        except Exception:  # left to each run, which fails or not as it would anyway
            continue
        made[str(path)] = (source, code)
    return made


def _serve_own_plugins() -> None:
    """In the child: pytest's rewriter takes the code `_rewrite_own_plugins` made for a
    plugin file that still holds the bytes it was made from; for any other file, its own
    bytecode or none, as before."""
    from pathlib import Path

    from _pytest.assertion import rewrite

    real, made, served = rewrite._read_pyc, _REWRITTEN, []

    def _read_pyc(source, pyc, trace=lambda _message: None):
        known = made.get(str(source))
        if known is not None:
            with contextlib.suppress(OSError):
                if Path(source).read_bytes() == known[0]:
                    served.append(str(source))
                    return known[1]
        return real(source, pyc, trace)

    _read_pyc.served = served  # type: ignore[attr-defined]  # what a test of it reads
    rewrite._read_pyc = _read_pyc


def _preload_plugins() -> tuple[frozenset[str], frozenset[str]]:
    """The environment's own pytest plugins (its `pytest11` entry points) and what they
    import, imported here once instead of in every run: anyio's plugin, for one, pulls in
    its asyncio backend (~35 ms of a sqlparse confirmation run). pytest marks every module
    of a plugin's distribution for assertion rewriting, and one imported before it
    unrewritten would be neither rewritten nor silent (PytestAssertRewriteWarning, an error
    under `filterwarnings = error`): those modules are imported through pytest's own
    rewriter here (`_PluginRewriter`), as a run's would rewrite them, or, where that cannot
    be, left to each run. Returns the names of the modules kept and of the plugins; the
    environment is the same for every run, and what a run may change is dealt with in
    `_forget_preloaded`."""
    try:
        from importlib.metadata import distributions

        from _pytest.config import _iter_rewritable_modules
    except ImportError:  # another pytest: nothing is preloaded
        return frozenset(), frozenset()
    before = set(sys.modules)
    names: set[str] = set()
    rewritten: set[str] = set()
    modules: list[str] = []
    try:
        for dist in distributions():
            plugins = [ep for ep in dist.entry_points if ep.group == "pytest11"]
            if not plugins:
                continue
            rewritten.update(_iter_rewritable_modules(str(f) for f in dist.files or []))
            for plugin in plugins:
                module = plugin.value.split(":")[0].strip()
                names.add(plugin.name)
                modules.append(module)
                rewritten.add(module.split(".")[0])  # an editable install lists no files
    except Exception:
        return frozenset(), frozenset()
    finder = _plugin_rewriter(rewritten)
    if finder is not None:
        sys.meta_path.insert(0, finder)
    try:
        for module in modules:
            # as pluggy would import it; one that fails is left to the run, which fails alike
            with contextlib.suppress(Exception):
                importlib.import_module(module)
    finally:
        if finder is not None:
            sys.meta_path.remove(finder)  # a run's own hook rewrites what it imports later
    added = set(sys.modules) - before
    marked = {name for name in added if name.split(".")[0] in rewritten}
    # A package some module of which the rewriter did not load (an extension, a namespace
    # package) is left to each run whole, as are all of them without a rewriter.
    whole = {name.split(".")[0] for name in marked if finder is None or not isinstance(
        getattr(sys.modules[name], "__loader__", None), type(finder))}
    for name in marked:
        if name.split(".")[0] in whole:
            del sys.modules[name]
    return frozenset(n for n in added if n in sys.modules), frozenset(names)


def _plugin_rewriter(tops: set[str]):
    """A finder that imports the modules of the packages `tops` as pytest's assertion
    rewriter imports a marked module (`_rewrite_test`, no configuration: the rewriting a run
    does unless it enables `enable_assertion_pass_hook`), with a loader of the rewriter's
    class, which a run's own hook takes for its own (no PytestAssertRewriteWarning). None
    where this pytest has no such rewriter: the modules are then left to each run."""
    try:
        import importlib.machinery
        import importlib.util
        from pathlib import Path

        from _pytest.assertion.rewrite import AssertionRewritingHook, _rewrite_test
    except ImportError:
        return None

    class _PluginRewriter(AssertionRewritingHook):  # type: ignore[misc]
        def __init__(self) -> None:  # not the hook's: no configuration here
            self._rewritten_names = {}  # read by `get_resource_reader`
            self._writing_pyc = False

        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] not in tops:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is None or spec.origin is None \
                    or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
                return None  # a namespace package or an extension: imported as it is
            return importlib.util.spec_from_file_location(
                name, spec.origin, loader=self,
                submodule_search_locations=spec.submodule_search_locations)

        def exec_module(self, module) -> None:
            origin = Path(module.__spec__.origin)
            self._rewritten_names[module.__name__] = origin
            _hash, code = _rewrite_test(origin, None)
            exec(code, module.__dict__)

    try:
        return _PluginRewriter()
    except Exception:
        return None


def _forget_preloaded(job: dict, head: list[str]) -> bool:
    """Drop what `_preload_plugins` imported when this run might not import it the same way:
    its own paths (`head`: its working directory, PYTHONPATH) hold a module of that name
    (the project under test, say, which may itself be such a plugin), it turns plugin
    autoloading off, or it may block one of them (`no:NAME` in its arguments, PYTEST_ADDOPTS
    or a config file in its working directory), or may rewrite asserts otherwise than the
    zygote did (`--assert`, `enable_assertion_pass_hook`). The run then imports them, or
    not, as a fresh process does. Returns whether they were dropped."""
    if not _PRELOADED:
        return False
    from importlib.machinery import ExtensionFileLoader, PathFinder

    env = job["env"]
    blocks = _settings_text(job)
    if "PYTEST_DISABLE_PLUGIN_AUTOLOAD" not in env \
            and not any(f"no:{name}" in blocks for name in _PLUGIN_NAMES) \
            and "--assert" not in blocks and "enable_assertion_pass_hook" not in blocks \
            and not any(PathFinder.find_spec(top, head) for top in _PRELOADED_TOPS):
        return False
    for name in _PRELOADED:
        loader = getattr(getattr(sys.modules.get(name), "__spec__", None), "loader", None)
        if not isinstance(loader, ExtensionFileLoader):  # one may refuse to load twice
            sys.modules.pop(name, None)
    return True


def _settings_text(job: dict) -> str:
    """What may set a run's options: its arguments, PYTEST_ADDOPTS, the config files in its
    working directory."""
    text = " ".join([*job["args"], job["env"].get("PYTEST_ADDOPTS", "")])
    for config in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg"):
        with contextlib.suppress(OSError), open(config, "rb") as f:
            text += " " + f.read(1 << 20).decode(errors="replace")
    return text


def _forget_own(head: list[str]) -> None:
    """Drop each of `_OWN` that this run's own paths (`head`) would find elsewhere first."""
    from importlib.machinery import PathFinder

    for name in _OWN:
        spec = PathFinder.find_spec(name, head)
        if spec is None or spec.origin != getattr(sys.modules.get(name), "__file__", None):
            sys.modules.pop(name, None)


# `get_config` as pytest 9.0 and 9.2 write it (a digest of its statements, docstring aside;
# True: it takes `prog`): a plugin manager, a `Config` around it, the `-p no:` arguments
# blocked, pytest's own plugins imported and registered. The template below is that, built
# once; a pytest whose `get_config` is otherwise gets none.
_GET_CONFIG_SHAPES = {
    "06e14090c3cd24116f87ce67a6b5a906c3db119559e304ad779d573a9a93c75a": True,  # 9.2
    "40f37e75e3864283c29066137765438488a93bca885d8bc71138efe6a02198d1": False,  # 9.0
}
# What every warm run blocks (taskforge's `-p no:cacheprovider`): the template's blocks.
_TEMPLATE_ARGS = ("-p", "no:cacheprovider")


def _shape(function) -> str | None:
    import ast
    import hashlib
    import inspect
    import textwrap

    try:
        node = ast.parse(textwrap.dedent(inspect.getsource(function))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    body = getattr(node, "body", [])
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        node.body = body[1:]
    return hashlib.sha256(ast.dump(node, include_attributes=False).encode()).hexdigest()


def _config_template():
    """`(config, prog, takes_prog)`: the `Config` that `get_config` returns for a run whose
    arguments block exactly what `_TEMPLATE_ARGS` blocks, made here by the same calls in the
    same order, before anything of a run is known (its arguments, beyond those blocks, and
    its working directory are read later, by `pytest_cmdline_parse`): ~5 ms of every run
    (boltons' confirmation runs, 53 against 58 ms), most of it registering pytest's
    thirty-odd plugins and adding their options. None where this
    pytest's `get_config` is not one of `_GET_CONFIG_SHAPES`, or PYTEST_DEBUG would have the
    manager trace to this process's stderr."""
    if "PYTEST_DEBUG" in os.environ:
        return None
    try:
        import pathlib

        from _pytest import config as pytest_config

        takes_prog = _GET_CONFIG_SHAPES.get(_shape(pytest_config.get_config))
        if takes_prog is None:
            return None
        prog = pytest_config._get_prog_name(  # what `python -m pytest` will pass
            [os.path.join(os.path.dirname(pytest.__file__), "__main__.py")]) \
            if takes_prog else None
        manager = pytest_config.PytestPluginManager()
        params = pytest_config.Config.InvocationParams(args=_TEMPLATE_ARGS, plugins=None,
                                                       dir=pathlib.Path.cwd())
        config = pytest_config.Config(manager, invocation_params=params, prog=prog) \
            if takes_prog else pytest_config.Config(manager, invocation_params=params)
        manager.consider_preparse(_TEMPLATE_ARGS, exclude_only=True)
        for spec in pytest_config.default_plugins:
            manager.import_plugin(spec)
        return config, prog, takes_prog
    except Exception:
        return None


def _blocked_by(args) -> list[str]:
    """The `-p no:NAME` names of `args`, read as `consider_preparse` reads them."""
    names, i = [], 0
    while i < len(args):
        opt = args[i]
        i += 1
        if opt == "-p" and i < len(args):
            value = args[i]
            i += 1
        elif opt.startswith("-p") and opt != "-p":
            value = opt[2:]
        else:
            continue
        if value.strip().startswith("no:"):
            names.append(value.strip())
    return names


def _template_fits(job: dict) -> bool:
    """Whether `job`'s run may start from the template: it blocks what the template blocked,
    nothing more or less, and no PYTEST_DEBUG asks for a manager that traces."""
    return _TEMPLATE is not None and "PYTEST_DEBUG" not in job["env"] \
        and "PYTEST_DEBUG" not in _ADDED \
        and _blocked_by(job["args"]) == _blocked_by(list(_TEMPLATE_ARGS))


def _use_template(job: dict) -> None:
    """In the child: its first `get_config` call, the one `python -m pytest` makes with the
    job's arguments, gets the template with this run's invocation (arguments, working
    directory); any other call, or a later one (a test that runs pytest in process), the
    real `get_config`."""
    import pathlib

    from _pytest import config as pytest_config

    config, prog, takes_prog = _TEMPLATE
    real = pytest_config.get_config

    def get_config(args=None, plugins=None, **kwargs):
        pytest_config.get_config = real
        if plugins is not None or list(args or ()) != list(job["args"]) \
                or (kwargs != {"prog": prog} if takes_prog else kwargs):
            return real(args, plugins, **kwargs)
        config.invocation_params = pytest_config.Config.InvocationParams(
            args=args or (), plugins=plugins, dir=pathlib.Path.cwd())
        return config

    pytest_config.get_config = get_config


# `FixtureManager._check_for_wrapped_fixture` and the lookup it makes,
# `_find_wrapped_fixture_def`, as pytest 9.2 writes them (digests of their statements,
# docstrings aside): `_plain_attributes` stands in for them only there.
_WRAPPED_CHECK_SHAPES = {
    ("e435c12057a870f145d85c3841e661a0e11442e7ab63743400de3d2a11c22e0b",
     "96813b76c1813ff4f041fed1c4b919b911f4f2a2d366075c98fc0bb6166430a1"),  # 9.2
}


def _plain_attributes() -> dict:
    """The objects of pytest's own modules and the preloaded plugins' (and of the classes
    those modules define) that pytest 9.2's check for a fixture hidden behind a decorator
    passes over, by id: `{id: object}`. The fixture manager of every run scans each plugin
    it holds (modules, and instances of those classes), name by name, and that check, an
    `inspect.unwrap` of each attribute, was the most of it (~5 ms of a boltons confirmation
    run's ~55, counted by callgrind). What the check finds depends on the object alone (its
    `__wrapped__` chain, its `_mock_name`), so it is found once here; objects are kept, so
    an id stands for one object. Empty where pytest's check is otherwise, or missing."""
    try:
        from _pytest.fixtures import FixtureManager
    except ImportError:
        return {}
    check = getattr(FixtureManager, "_check_for_wrapped_fixture", None)
    find = getattr(FixtureManager, "_find_wrapped_fixture_def", None)
    if check is None or find is None \
            or (_shape(check), _shape(find)) not in _WRAPPED_CHECK_SHAPES:
        return {}
    plain: dict = {}
    for name, module in list(sys.modules.items()):
        if not (name in ("pytest", "pluggy") or name.startswith(("_pytest.", "pluggy."))
                or name in _PRELOADED) or not hasattr(module, "__dict__"):
            continue
        namespaces = [vars(module)] + [vars(value) for value in list(vars(module).values())
                                       if isinstance(value, type)
                                       and getattr(value, "__module__", None) == name]
        for namespace in namespaces:
            for value in list(namespace.values()):
                if id(value) in plain:
                    continue
                try:
                    found = find(None, value)  # (it reads nothing of its manager)
                except Exception:
                    continue
                if found is None or found is value:  # what the check passes over
                    plain[id(value)] = value
    return plain


# Where the environment's modules are: the standard library and site-packages of this
# interpreter (a .pth file's other directories may hold anything, the project among them).
_ENV_ROOTS = tuple({root for key in ("stdlib", "platstdlib", "purelib", "platlib")
                    for path in [sysconfig.get_path(key)] if path
                    for root in (path, os.path.realpath(path))})


def _import_environment(path: list[str]) -> tuple[tuple[str, ...], dict, dict, str | None]:
    """The environment's modules taskforge learned that runs import before their first test
    (`path`: a JSON list of names, in the order they were imported), those of them that
    qualify imported here (`taskforge_preload`: each tried in a fork first). Returns (the
    names imported, the environment variables they read with their values, {name refused:
    why}, why this process must serve no run: an import that did not go as its trial did).
    Runs that cannot use them run elsewhere (`_env_modules_unfit`)."""
    if not path:
        return (), {}, {}, None
    import taskforge_preload

    try:
        with open(path[0], encoding="utf-8") as f:
            names = [n for n in json.load(f) if isinstance(n, str) and n not in sys.modules]
        # where runs differ: the warm root above this zygote's directory, which holds their
        # workspaces, results and homes; this process's own home and temporary directory
        roots = [os.path.dirname(os.getcwd()),
                 *(os.environ[k] for k in ("HOME", "TMPDIR") if os.environ.get(k))]
        accepted, refused = taskforge_preload.choose(names, roots)
        imported, reads, unfit = taskforge_preload.import_chosen(accepted, roots)
    finally:
        sys.modules.pop("taskforge_preload", None)  # no run's business
    return tuple(imported), reads, refused, unfit


def _env_modules_unfit(job: dict, head: list[str], dropped: bool) -> str | None:
    """Why this run may not use the environment's modules imported here (None: it may): it
    drops the plugins they were imported after; a variable one of them read on import is
    not the run's; or the run may import one otherwise: a module or package of that name in
    its tree (every directory pytest or a conftest puts on `sys.path` is in it), in its other
    paths (`head`), a conftest that marks one for rewriting or loads it as a plugin, or a
    `-p` that does. It then runs where they are not imported."""
    if dropped:
        return "it drops the zygote's plugins"
    for key, value in _ENV_READS.items():
        if os.environ.get(key) != value:
            return f"its ${key} is not what an environment module read on import"
    import re
    from importlib.machinery import PathFinder

    tops = _ENV_TOPS
    for top in tops:
        spec = PathFinder.find_spec(top, [h for h in head if h != job["cwd"]])
        if spec is not None:
            return f"its paths hold {top}"
    alternatives = "|".join(map(re.escape, sorted(tops)))
    words = re.compile(rf"\b({alternatives})\b")
    if re.search(rf"-p\s*=?\s*({alternatives})\b", _settings_text(job)):
        return "its options load one as a plugin"
    for directory, dirs, files in os.walk(job["cwd"]):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs:
            if name in tops:
                return f"its tree holds {os.path.join(directory, name)}"
        for name in files:
            if name.split(".", 1)[0] in tops and name.endswith((".py", ".pyc", ".so", ".pyd")):
                return f"its tree holds {os.path.join(directory, name)}"
            if name == "conftest.py":
                with contextlib.suppress(OSError), \
                        open(os.path.join(directory, name), "rb") as f:
                    text = f.read(1 << 20).decode(errors="replace")
                if ("register_assert_rewrite" in text or "pytest_plugins" in text) \
                        and words.search(text):
                    return f"{os.path.join(directory, name)} may load one as a plugin"
    return None


_ENV_CHANGED: set[str] = set()  # environment variables a run set or removed


def _note_environment_changes() -> None:
    """In the child: note each environment variable the run sets or removes through
    `os.environ` (a test module may set one before it imports a library that reads it)."""
    cls = type(os.environ)
    set_item, del_item = cls.__setitem__, cls.__delitem__

    def __setitem__(self, key, value):
        _ENV_CHANGED.add(os.fsdecode(key))
        set_item(self, key, value)

    def __delitem__(self, key):
        _ENV_CHANGED.add(os.fsdecode(key))
        del_item(self, key)

    cls.__setitem__, cls.__delitem__ = __setitem__, __delitem__


_COLLECTED: list | None = None  # sys.modules as the run's collection left it


def _note_collection() -> None:
    """In the child: what the run had imported once it collected its tests (before any test
    ran), for `_environment_imports`."""
    from _pytest.main import Session

    real = Session.perform_collect

    def perform_collect(self, *args, **kwargs):
        global _COLLECTED
        try:
            return real(self, *args, **kwargs)
        finally:
            if _COLLECTED is None:
                _COLLECTED = list(sys.modules.items())

    Session.perform_collect = perform_collect


def _environment_imports(head: list[str]) -> list[str]:
    """The environment's modules the run had imported when its collection ended that this
    zygote had not (loaded from its files as they are, not rewritten, nor from the run's own
    paths), in the order they were imported: what taskforge may have a zygote import ahead."""
    names = []
    for name, module in _COLLECTED or ():
        if name in _ZYGOTE_MODULES or name.startswith(("__", "taskforge_")):
            continue
        spec = getattr(module, "__spec__", None)
        origin = getattr(spec, "origin", None)
        kind = type(getattr(spec, "loader", None)).__name__
        if not isinstance(origin, str) or not os.path.isabs(origin) or kind not in (
                "SourceFileLoader", "SourcelessFileLoader", "ExtensionFileLoader"):
            continue
        if any(origin.startswith(root + os.sep) for root in _ENV_ROOTS) \
                and not any(origin.startswith(h + os.sep) for h in head):
            names.append(name)
    return names


def _report(job: dict, **facts: object) -> None:
    with contextlib.suppress(OSError), open(job["report"], "w", encoding="utf-8") as f:
        json.dump(facts, f)


def _skip_known_plain() -> None:
    """In the child: pytest's check passes over the objects `_plain_attributes` found."""
    from _pytest.fixtures import FixtureManager

    real, plain = FixtureManager._check_for_wrapped_fixture, _PLAIN

    def _check_for_wrapped_fixture(self, name, obj):
        if plain.get(id(obj)) is obj:
            return None
        return real(self, name, obj)

    FixtureManager._check_for_wrapped_fixture = _check_for_wrapped_fixture


_import_pytests_own()
_PRELOADED, _PLUGIN_NAMES = _preload_plugins()
_OWN = _import_taskforges_own()
_REWRITTEN = _rewrite_own_plugins()
_PRELOADED_TOPS = sorted({name.split(".")[0] for name in _PRELOADED})
_TEMPLATE = _config_template()
_PLAIN = _plain_attributes()
_ZYGOTE_MODULES = frozenset(sys.modules)  # what a run finds imported, the environment's aside
_ENV_MODULES, _ENV_READS, _ENV_REFUSED, _ENV_UNFIT = _import_environment(sys.argv[3:4])
_ENV_TOPS = frozenset(name.split(".")[0] for name in _ENV_MODULES)
if "taskforge_state" in _OWN:
    sys.modules["taskforge_state"].remember_real_paths()
# What exists now (pytest, its plugins and the standard modules they import; their garbage
# collected first) is never collected again, in a child either: pytest's unconfigure collects
# garbage, and a full collection walked (and copied) every page of this process, ~14 ms a
# run. A run sees one difference: `gc.get_objects()` and `gc.get_referrers()` leave these
# objects out (none of them is the project's: this process imports nothing of it).
gc.collect()
gc.freeze()

# What `sys.path` holds besides the script's directory and PYTHONPATH: the standard library,
# site-packages and what their .pth files add. A run puts its own head before it.
_STARTUP_PYTHONPATH = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
_BASE_PATH = [p for p in sys.path[1:] if p not in _STARTUP_PYTHONPATH]
# What the sandbox added to the environment taskforge gave this server (docker's HOSTNAME;
# PWD from bwrap's --chdir or docker's shell): a fresh command in that sandbox would have it
# too, so a run gets it (PWD naming the run's own working directory).
_GIVEN = set(os.environ.pop("TASKFORGE_ZYGOTE_GIVEN", "").split(","))
_ADDED = {k: v for k, v in os.environ.items() if k not in _GIVEN}


def _child(job: dict) -> None:
    """In the forked child: become the fresh `python -m pytest` of `job`; never returns."""
    code = 1
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir(job["cwd"])
        os.environ.clear()
        os.environ.update(_ADDED)
        if "PWD" in _ADDED:
            os.environ["PWD"] = job["cwd"]
        os.environ.update(job["env"])
        pythonpath = [p for p in job["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [job["cwd"], *pythonpath, *_BASE_PATH]
        import tempfile

        importlib.invalidate_caches()
        head = [job["cwd"], *pythonpath]
        dropped = _forget_preloaded(job, head)
        if _ENV_MODULES:
            unfit = _env_modules_unfit(job, head, dropped)
            if unfit:
                _report(job, fresh=unfit)  # nothing ran: the run goes elsewhere
                code = 0
                return
            _note_environment_changes()
        _note_collection()
        _forget_own(head)
        tempfile.tempdir = None  # computed again from this run's TMPDIR
        sys.argv = ["-m", *job["args"]]
        if job.get("template"):
            _use_template(job)
        if _PLAIN:
            _skip_known_plain()
        if _REWRITTEN:
            _serve_own_plugins()
        import runpy

        try:
            runpy._run_module_as_main("pytest")  # type: ignore[attr-defined]  # what -m runs
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        finally:
            # A variable an environment module read on import that the run then set: a
            # fresh run that imported the module after would have read the run's value.
            changed = sorted(_ENV_CHANGED & set(_ENV_READS))
            _report(job, imported=_environment_imports(head),
                    fresh=f"it set ${changed[0]}, which an environment module read on import"
                    if changed else None)
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code if 0 <= code < 256 else 1)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _wait_for_end(pid: int, deadline: float) -> bool:
    """Whether the child `pid` ended before `deadline` (it is not reaped). Woken by its end
    through a pidfd where the kernel has them: a run of a few quick tests takes ~0.1 s, and
    polling would add up to its interval to each."""
    try:
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # before Python 3.9 or Linux 5.3, or a seccomp filter
        pidfd = None
    try:
        delay = 0.001
        while True:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if pidfd is not None:
                select.select([pidfd], [], [], left)
            else:
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.02)
    finally:
        if pidfd is not None:
            os.close(pidfd)


class _Parked:
    """A child forked ahead of its job, waiting for it on a pipe.

    Forking this process and the child's first steps after it (the interpreter's at-fork
    work, its first copied pages) took ~5 ms of each run before its job's own first line, on
    boltons; a child forked as soon as the run before it ended has done them while taskforge
    made the next workspace. It is forked from the same state a job's fork would be (this
    process changes nothing between jobs) and, until its job comes, only copies the pages
    the run will write (`_copy_pages_ahead`); then it is the job's `_child`. The end of its
    pipe without a job ends it."""

    def __init__(self) -> None:
        reader, self.writer = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.writer)
            _copy_pages_ahead(reader)
            job = _read_job(reader)
            if job is None:
                os._exit(0)
            _child(job)
        os.close(reader)

    def start(self, job: dict) -> bool:
        """Give it `job`; False when it cannot take it (it is gone): the caller forks anew."""
        data = json.dumps(job).encode() + b"\n"
        try:
            if os.waitpid(self.pid, os.WNOHANG) != (0, 0):
                return False
            while data:
                data = data[os.write(self.writer, data):]
            return True
        except OSError:
            return False
        finally:
            os.close(self.writer)

    def dismiss(self) -> None:
        os.close(self.writer)  # its read ends: it exits
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


PAGES_AHEAD_OBJECTS = 200_000  # past this many, the rest is left to the run


def _copy_pages_ahead(reader: int) -> None:
    """While it waits: touch the objects a run will (every one reachable from the modules:
    pytest's, its plugins', the standard library's), so that the pages they sit on, shared
    with this process since the fork, are copied now rather than one fault at a time during
    the run. It only takes references and drops them; it stops when the job comes. On
    boltons, a run took ~6 ms less (three A/B pairs of the confirmation runs)."""
    seen: set[int] = set()
    stack = list(sys.modules.values())
    while stack and len(seen) < PAGES_AHEAD_OBJECTS:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        stack.extend(gc.get_referents(obj))
        if len(seen) % 500 == 0 and select.select([reader], [], [], 0)[0]:  # ~0.7 ms apart
            break


def _read_job(reader: int) -> dict | None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(reader, 1 << 16)
        if not chunk:
            return None
        data += chunk
    os.close(reader)
    return json.loads(data)


def _run(job: dict, parked: _Parked | None = None) -> dict:
    """Run `job` in `parked` (which it uses up) or, failing that, in a child forked now."""
    start = time.monotonic()
    job = {**job, "template": _template_fits(job)}
    if parked is not None and parked.start(job):
        pid = parked.pid
    else:
        if parked is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(parked.pid, 0)
        pid = os.fork()
        if pid == 0:
            _child(job)
    deadline = start + float(job["timeout"])
    timed_out = not _wait_for_end(pid, deadline)
    if timed_out:
        _kill_group(pid)
    _done, status = os.waitpid(pid, 0)
    _kill_group(pid)  # what the run left running in its session
    code = -signal.SIGKILL if timed_out else os.waitstatus_to_exitcode(status)
    report: dict = {}
    with contextlib.suppress(OSError, ValueError):
        with open(job["report"], encoding="utf-8") as f:
            report = json.load(f)
        os.unlink(job["report"])
    return {"id": job["id"], "exit_code": code, "timed_out": timed_out,
            "seconds": time.monotonic() - start, "template": job["template"],
            "imported": report.get("imported", []), "fresh": report.get("fresh")}


def _open_ends(jobs_path: str, results_path: str) -> tuple[TextIO, TextIO] | None:
    """The server's ends of the two FIFOs, or None when its owner is gone.

    Blocking opens would wait for the other end: a server that reaches them after its owner
    closed its ends (the owner ended while this one was still importing) would wait forever,
    with nobody left to open them. Opened without waiting, a jobs FIFO with no writer reads
    as its end, and a results FIFO with no reader fails (ENXIO); either ends the server."""
    jobs_fd = os.open(jobs_path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        results_fd = os.open(results_path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        os.close(jobs_fd)
        return None
    os.set_blocking(jobs_fd, True)
    os.set_blocking(results_fd, True)
    return (open(jobs_fd, encoding="utf-8"), open(results_fd, "w", encoding="utf-8"))


def main(jobs_path: str, results_path: str) -> None:
    ends = _open_ends(jobs_path, results_path)
    if ends is None:
        return
    with ends[0] as jobs, ends[1] as results:
        results.write(json.dumps({"ready": _ENV_UNFIT is None, "unfit": _ENV_UNFIT,
                                  "preloaded": list(_ENV_MODULES),
                                  "refused": _ENV_REFUSED}) + "\n")
        results.flush()
        parked = _Parked()
        for line in jobs:
            if line.strip():
                results.write(json.dumps(_run(json.loads(line), parked)) + "\n")
                results.flush()
                parked = _Parked()  # the next run's, while taskforge prepares it
        parked.dismiss()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
