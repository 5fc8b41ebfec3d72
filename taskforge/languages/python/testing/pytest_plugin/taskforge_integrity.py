"""The grader's observer inside the test process: is the runner still the runner?

Imported by taskforge_pytest_plugin when it loads (`-p`, before any conftest or project
code), only when grading (TASKFORGE_INTEGRITY names a directory holding `key`). It must import
nothing from taskforge: it runs in the project's environment. At import it:
- reads the per-grading key and deletes its file, so no later code can read it from disk;
- opens `integrity.jsonl` there and keeps the descriptor: every line it writes carries a
  sequence number and a MAC under the key (the grader rejects a missing, reordered, forged
  or unfinished channel);
- snapshots the functions and classes of pytest, _pytest, pluggy, unittest, the JUnit writer's
  ElementTree, builtins and this plugin (module attributes, each function's code, the class
  dictionaries and bases), the trace and profile functions, the exception hooks,
  sys.meta_path and sys.path_hooks, keeping strong references (an identity compared later
  cannot be reused), and threading's (where only the solution's code counts);
- wraps threading's excepthook invoker, to check threading.excepthook when a thread raises.
After collection it adds the test code to the snapshot (watch_test_code): the modules of the
tests, conftests and their helpers, the classes defined there, and the callables held by
their module-level objects (an assertion helper's TestCase), where the tests' own changes
are told apart from the solution's by where the new code comes from.
During the session it records, for every test, whether any phase raised, read from the
CallInfo before any report exists (a second observer the grader compares with the JUnit
XML). It compares the snapshot after collection, before the results are written and at the
end, and after tests as long as comparing has cost at most 3% of the session; it looks for
hook implementations, plugin-manager internals and import hooks whose code is the
solution's (or has no file). Findings are written through the descriptor at once, so later
code cannot take them back.

What it cannot see: code that restores what it patched between two comparisons, that reaches
this module's state (key, references) through the interpreter and forges the channel, or
that changes instances (a report, the session) rather than pytest's code; what the solution
did to the test code while it was being imported (before the end of collection); a test
object's callable replaced by one of an installed library's (a Mock); the second observer and
the canaries the grader plants are the backstop for those, and for what nobody anticipated.
"""

import builtins
import contextlib
import functools
import itertools
import json
import operator
import os
import pathlib
import sys
import threading
import time
import types
import warnings

try:  # keyed BLAKE2b: a MAC without loading OpenSSL (importing hashlib costs ~3 ms)
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

import pytest

try:  # how pytest compiles a test, a conftest or a plugin's module (bound before any project code)
    from _pytest.assertion.rewrite import _rewrite_test
except ImportError:  # another pytest: plain compilation only
    _rewrite_test = None

# The builtins this module calls, bound as its own globals at import: code that replaces
# them in `builtins` later does not reach the observer (and these names are compared too).
globals().update({name: getattr(builtins, name) for name in (
    "all", "any", "bool", "callable", "compile", "frozenset", "getattr", "id", "isinstance",
    "list", "len", "map", "open", "repr", "set", "sum", "tuple", "type", "vars", "zip")})

_TRACKED = ("pytest", "_pytest", "pluggy", "unittest", "builtins", "xml.etree",
            "taskforge_pytest_plugin", "taskforge_integrity")
# Module attributes pytest itself rebinds during a run (set per test, then restored or left).
_VOLATILE = {("_pytest.assertion.util", "_reprcompare"),
             ("_pytest.assertion.util", "_assertion_pass"),
             ("_pytest.assertion.util", "_config"),
             ("_pytest.assertion.rewrite", "_reprcompare"),
             ("_pytest.assertion.rewrite", "_assertion_pass")}
_KINDS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, property,
          staticmethod, classmethod, types.MethodDescriptorType, types.WrapperDescriptorType,
          types.GetSetDescriptorType, types.MemberDescriptorType)
_MISSING = object()
# Taken at import: a test may delete sys._getframe for a while (monkeypatch), and a solution
# may replace it.
_getframe = sys._getframe
_RUNNER = ("_pytest", "pytest", "pluggy")
COMPARE_SHARE = 0.03
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE
_ATTRIBUTES = {"code": "__code__", "bases": "__bases__"}
_IN_DICTS = ("item", "attr", "object", "test", "foreign")  # entries read from a dictionary
# What a hypothesis test's settings decide about its outcome (the engine reads them live).
_PROPERTY_SETTINGS = ("max_examples", "derandomize", "phases", "stateful_step_count",
                      "deadline", "suppress_health_check", "report_multiple_bugs", "backend")


def _underlying(value):
    """The functions behind a property, a static or class method, a bound method or a
    functools.partial (the callable itself otherwise)."""
    for _ in range(4):
        if isinstance(value, property):
            return [f for f in (value.fget, value.fset, value.fdel) if f is not None] or [value]
        if isinstance(value, types.MethodType | staticmethod | classmethod):
            value = value.__func__
        elif isinstance(value, functools.partial):
            value = value.func
        else:
            break
    return [value]


# What `_seen` reads in full: longer values are not recorded.
_LONGEST_SEEN = 100_000


def _sides(left, right):
    """Both sides `_seen`, where one is a plain str, bytes, int or float, or a plain list,
    tuple, dict or set (an expectation copy's literal always is); None otherwise, and no
    repr made of what a test compared."""
    if not _plain(left) and not _plain(right):
        return None
    return [_seen(left), _seen(right)]


_PLAIN = (str, bytes, int, float, bool)
_CONTAINERS = (list, tuple, dict, set)
# The items `_plain_container` looks at, at most: a bigger value is no plain one.
_MOST_ITEMS = 10_000


def _plain_type(value):
    """Exactly one of _PLAIN (by identity: a metaclass may say any class equals str)."""
    kind = type(value)
    return any(kind is plain for plain in _PLAIN)


def _plain_container(value):
    """Exactly a list, tuple, dict or set whose items (a dict's keys and values) are of
    _PLAIN, None or such containers, all through: what `repr` writes as a literal and no
    code of the solution's runs in (types by identity, as in `_plain_type`)."""
    if not any(type(value) is kind for kind in _CONTAINERS):
        return False
    pending, seen = [value], 0
    while pending:
        current = pending.pop()
        items = list(dict.items(current)) if type(current) is dict else list(current)
        for item in items:
            for part in item if type(current) is dict else (item,):
                seen += 1
                if seen > _MOST_ITEMS:
                    return False  # (a list holding itself ends here too)
                if any(type(part) is kind for kind in _CONTAINERS):
                    pending.append(part)
                elif part is not None and not _plain_type(part):
                    return False
    return True


def _plain(value):
    return _plain_type(value) or _plain_container(value)


def _seen(value):
    """A compared value as the grader reads it: [the repr of its plain value where it is a
    str, bytes, int or float (of a subclass too: the text of a str enum) or a plain list,
    tuple, dict or set (`_plain_container`; of a subclass too, through the base type's own
    slots: a namedtuple's items), its own repr];
    None for a part it cannot give (no plain value, too long, a repr that raises)."""
    plain = _MISSING
    try:
        if _plain(value):
            plain = value
        elif isinstance(value, str):
            plain = str.__getitem__(value, slice(None))  # a plain str, whatever the subclass
        elif isinstance(value, bytes):
            plain = bytes.__getitem__(value, slice(None))
        elif isinstance(value, int):
            plain = int.__int__(value)
        elif isinstance(value, float):
            plain = float.__float__(value)
        elif any(isinstance(value, kind) for kind in _CONTAINERS):
            # a namedtuple, a list or dict subclass: its items as the base type holds them
            # (its own `__iter__`, `keys` or `__getitem__` never called), where they are plain
            # (`dict.copy` would call a subclass's `keys`; its items view reads the table)
            base = next(kind for kind in _CONTAINERS if isinstance(value, kind))
            items = base.__getitem__(value, slice(None)) if base in (list, tuple) \
                else set.copy(value) if base is set else list(dict.items(value))
            plain = _MISSING if not _plain_container(items) \
                else dict(items) if base is dict else items
    except Exception:  # (a subclass's own hooks cannot reach these; kept for safety)
        plain = _MISSING
    return [None if plain is _MISSING else _shown(plain), _shown(value)]


def _shown(value):
    try:
        text = repr(value)
    except Exception:  # a repr that raises; an int past the digits str() takes
        return None
    return text if isinstance(text, str) and len(text) <= _LONGEST_SEEN else None


def _code_key(code):
    """What tells code objects of one file apart: name, first line, instructions, names and
    constants (nested code by name and line: it is compared on its own)."""
    consts = tuple((c.co_name, c.co_firstlineno) if isinstance(c, types.CodeType)
                   else (type(c), repr(c)) for c in code.co_consts)
    return (code.co_name, code.co_firstlineno, code.co_code, code.co_names, code.co_varnames,
            consts)


_FILE_KEYS = {}  # file -> `_code_key`s of what its source compiles to (`code_of_file`)


def code_of_file(code, path, config=None):
    """Whether `code` is what the file `path` (a real path) compiles to, plainly or through
    pytest's assertion rewriter (a test, a conftest, a plugin's module: `config`, the
    session's, tells the rewriter how), at its name and line. Code compiled at run time under
    that file's name (`compile`, `code.replace`, a library's code generator) is not. Each
    file is compiled once a process; one that cannot be read or compiled holds no code
    (fail closed). Also the audit hook's (taskforge_pytest_plugin), for the frames it
    charges events to."""
    keys = _FILE_KEYS.get(path)
    if keys is None:
        keys = _FILE_KEYS[path] = _keys_of_file(path, config)
    return _code_key(code) in keys


def _keys_of_file(path, config):
    roots = []
    # Compiled quietly: a test's warnings filter (`filterwarnings = error`, a
    # `catch_warnings` block) is in force here, and an invalid escape in the file would turn
    # its compilation into an error, or a warning the test sees.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with open(path, "rb") as handle:
                roots.append(compile(handle.read(), path, "exec", dont_inherit=True))
        except Exception:  # unreadable, or not Python
            return frozenset()
        if _rewrite_test is not None:
            # (another pytest's signature: plain compilation only)
            with contextlib.suppress(Exception):
                roots.append(_rewrite_test(pathlib.Path(path), config)[1])
    keys = set()
    while roots:
        code = roots.pop()
        keys.add(_code_key(code))
        roots.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return frozenset(keys)


def _resolved(origin):
    """A code origin as paths are compared: a file's real path; `<...>` as it is."""
    return origin if origin.startswith("<") else os.path.realpath(origin)


def _tracked(name):
    return any(name == root or name.startswith(root + ".") for root in _TRACKED)


def install(directory, solution_files, workspace, test_files=()):
    """Start observing; return the plugin object (hooks) to register with pytest.
    `test_files`: real paths of the grading copy's tests, conftests and their helpers."""
    key_path = os.path.join(directory, "key")
    with open(key_path, "rb") as handle:
        key = handle.read()
    os.remove(key_path)
    fd = os.open(os.path.join(directory, "integrity.jsonl"),
                 os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    return _Observer(key, fd, frozenset(solution_files), workspace, frozenset(test_files))


class _Observer:
    """Hooks of the observer; everything it relies on was captured in __init__."""

    def __init__(self, key, fd, solution, workspace, test_files):
        self._write = os.write
        self._json = json.dumps
        self._mac = blake2b
        self._key = key
        self._fd = fd
        self._seq = 0
        self._lock = threading.Lock()
        self._solution = solution
        self._workspace = workspace
        self._test_files = test_files
        self._groups = []
        self._known_code = {}  # id -> code object of a function the snapshot holds (and nested)
        self._watched_modules = set()
        self._namespaces = []  # (label, a class's or an object's dictionary, its keys, rule)
        self._seen = set()
        self._raised = {}
        self._last_compared = None  # this test's last failing `==`, as `_seen`
        self._failed_compare = {}  # node id -> what its failure compared
        self._clock = time.perf_counter
        self._started = self._clock()
        self._spent = 0.0
        self._watch_thread_exceptions()
        self._index(self._snapshot())
        self._process = self._process_state()
        self._import_hooks = (*sys.meta_path, *sys.path_hooks)
        self._hookimpls_checked = set()
        self._plugin_files = frozenset()
        self._config = None  # the session's, once seen: pytest's rewriter reads it
        runner = sys.modules.get("_pytest.runner")
        self._call_and_report = getattr(getattr(runner, "call_and_report", None),
                                        "__code__", None)
        self._property_tests = {}  # node id -> (test function, its settings, their values)
        self._emit({"kind": "start", "entries": sum(len(g[2]) for g in self._groups)})

    # ---- the channel ------------------------------------------------------------------
    def _emit(self, payload):
        with self._lock:
            payload["seq"] = self._seq
            self._seq += 1
            line = self._json(payload, sort_keys=True)
            mac = self._mac(line.encode(), key=self._key, digest_size=32).hexdigest()
            self._write(self._fd, (line + "\t" + mac + "\n").encode())

    def _problem(self, message):
        if message not in self._seen:
            self._seen.add(message)
            self._emit({"kind": "problem", "message": message})

    def _watch_thread_exceptions(self):
        """Check threading.excepthook when a thread raises, not only at the comparisons: a hook
        swapped in and put back around one failure is gone by then. Every thread's hook
        invoker comes from threading._make_invoke_excepthook: it is wrapped (before the
        snapshot, so the wrapper is the reference)."""
        make = getattr(threading, "_make_invoke_excepthook", None)
        if make is None:
            return
        module, observer = threading, self

        def make_invoke_excepthook():
            invoke = make()

            def invoke_excepthook(thread):
                hook = module.excepthook
                if observer._suspicious(hook):
                    observer._problem(f"threading.excepthook was changed to "
                                      f"{observer._origin_text(hook)} (seen when a thread raised)")
                invoke(thread)
            return invoke_excepthook

        threading._make_invoke_excepthook = make_invoke_excepthook

    # ---- the snapshot -------------------------------------------------------------------
    def _snapshot(self):
        """(owner, key, label, what, reference): `what` is "item" (owner[key], owner a
        module's dictionary or sys.modules), "attr" (the same in a class's dictionary),
        "code" (owner is a function) or "bases" (a class). Functions' defaults are not
        compared (a third of the cost, and a changed default of pytest's shows in the canaries
        or the second observer)."""
        modules = [(name, module) for name, module in list(sys.modules.items())
                   if _tracked(name) and isinstance(module, types.ModuleType)]
        entries = self._entries_of(modules, lambda cls: _tracked(cls.__module__ or ""),
                                   lambda function: True)
        # threading: what runs a test's worker threads and hands their exceptions to pytest.
        # gevent and the like replace its parts for good: only the solution's code, or code
        # of no file, in its place is reported.
        entries += self._entries_of([("threading", threading)],
                                    lambda cls: cls.__module__ == "threading",
                                    lambda function: True, rule="foreign")
        runner = [(what, value) for _o, _k, label, what, value in entries
                  if what in ("item", "attr") and label.split(".")[0] in _RUNNER]
        self._runner_functions = {id(f): f for what, value in runner if what == "item"
                                  for f in _underlying(value) if isinstance(f, types.FunctionType)}
        return entries

    def _entries_of(self, modules, own_class, own_code, rule=None):
        """The entries of `modules`: their functions and classes, the dictionaries and bases
        of the classes `own_class` accepts (also watched for attributes added), the code of
        the functions `own_code` accepts. Changes are judged by `rule` (see _reported), by
        default strictly ("item") or as pytest's own ("attr", "class")."""
        item, attr_rule, added = (rule,) * 3 if rule else ("item", "attr", "class")
        entries = []
        classes = {}
        for name, module in modules:
            entries.append((sys.modules, name, name, item, module))
            for attr, value in list(vars(module).items()):
                # By the type alone: asking an object for its __class__ may run its code.
                if (name, attr) in _VOLATILE or not issubclass(type(value), _KINDS):
                    continue
                entries.append((vars(module), attr, f"{name}.{attr}", item, value))
                # Built-in (static) types cannot be changed: only classes defined in Python.
                if isinstance(value, type) and value.__flags__ & _HEAPTYPE and own_class(value):
                    classes[id(value)] = value
        for cls in classes.values():
            label = f"{cls.__module__}.{cls.__qualname__}"
            entries.append((cls, None, label, "bases", cls.__bases__))
            namespace = vars(cls)  # one live view per class: the entries group by owner
            for attr, value in list(namespace.items()):
                if isinstance(value, _KINDS):
                    entries.append((namespace, attr, f"{label}.{attr}", attr_rule, value))
            self._namespaces.append((label, namespace, set(namespace), added))
        functions = {}  # each function once, under the first name it was found by
        for _owner, _key, label, what, value in list(entries):
            if what != "bases":
                for function in _underlying(value):
                    if isinstance(function, types.FunctionType) and own_code(function):
                        functions.setdefault(id(function), (function, label))
        for function, label in functions.values():
            entries.append((function, None, label, "code", function.__code__))
            self._know(function.__code__)
        return entries

    def _know(self, code):
        """Remember `code` and the code nested in it (closures made at run time) as the
        snapshot's: code of the file it names, no need to compile that file to tell."""
        stack = [code]
        while stack:
            code = stack.pop()
            self._known_code[id(code)] = code
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))

    def watch_test_code(self):
        """Add the test code, imported by now, to the snapshot: the modules of the grading
        copy's tests, conftests and helpers (their functions and classes, those classes'
        dictionaries, the code of functions defined there), and the dictionaries of objects
        they hold at module level (an assertion helper's TestCase instance), where a
        callable added or replaced by the solution's code, or a built-in one, is reported.
        The solution's code, which these modules import, may already have run: what it did
        to them while they were being imported is not seen."""
        modules, holders = [], []
        for name, module in list(sys.modules.items()):
            if not isinstance(module, types.ModuleType) or name in self._watched_modules:
                continue
            filename = getattr(module, "__file__", None)
            if not isinstance(filename, str) or os.path.realpath(filename) not in self._test_files:
                continue
            self._watched_modules.add(name)
            modules.append((name, module))
            for attr, value in list(vars(module).items()):
                namespace = self._own_dict(value)
                if namespace is not None and self._harness_object(value):
                    holders.append((f"{name}.{attr}", namespace))
        entries = self._entries_of(modules, lambda cls: cls.__module__ in self._watched_modules,
                                   lambda f: os.path.realpath(f.__code__.co_filename)
                                   in self._test_files, rule="test")
        for label, namespace in holders:
            for attr, value in list(namespace.items()):
                if isinstance(value, _KINDS):
                    entries.append((namespace, attr, f"{label}.{attr}", "object", value))
            self._namespaces.append((label, namespace, set(namespace), "object"))
        self._index(entries)

    @staticmethod
    def _own_dict(value):
        """An instance's own attribute dictionary, read past any __getattr__ or proxy (a
        lazy object of the tests must not run, nor raise, here); None for functions, classes,
        modules and objects without one."""
        kind = type(value)
        if issubclass(kind, (*_KINDS, types.ModuleType)) or not kind.__dictoffset__:
            return None
        try:
            namespace = object.__getattribute__(value, "__dict__")
        except Exception:  # any failure: not an object to watch
            return None
        return namespace if type(namespace) is dict else None

    def _harness_object(self, value):
        """Whether a module-level object of the test code belongs to the harness: its class
        comes from the test code, the standard library or another installed package (an
        assertion helper's TestCase), not from the project (the solution's to change), pytest
        or unittest.mock (their objects change as they are used)."""
        module_name = type(value).__module__ or ""
        if any(module_name == root or module_name.startswith(root + ".")
               for root in ("_pytest", "pytest", "pluggy", "unittest.mock")):
            return False
        filename = getattr(sys.modules.get(module_name), "__file__", None)
        if not isinstance(filename, str):
            return True
        path = os.path.realpath(filename)
        return path in self._test_files or \
            not path.startswith(os.path.realpath(self._workspace) + os.sep)

    def _runner_own(self, value):
        """Whether `value` is made of module-level functions of pytest, as snapshotted:
        pytest rebinds some class attributes itself (legacypath's properties), always with
        such functions. A method of pytest's moved elsewhere (append_pass as append_failure)
        is not."""
        functions = _underlying(value)
        return bool(functions) and all(self._runner_functions.get(id(f)) is f for f in functions)

    def trust_plugins(self, modules):
        """The environment's own pytest plugins, imported (by TASKFORGE_PLUGINS) after the
        snapshot: a runner class's attribute that one of their files sets is theirs
        (hypothesis' plugin wraps FixtureFunctionMarker.__call__ at import, to refuse
        @pytest.fixture on a @given test). Files in the workspace are left out: a plugin the
        project provides itself is the solution's to change."""
        root = os.path.realpath(self._workspace) + os.sep
        files = set(self._plugin_files)
        for module in modules:
            filename = getattr(module, "__file__", None)
            if isinstance(filename, str):
                path = os.path.realpath(filename)
                if not path.startswith(root) and path not in self._solution:
                    files.add(path)
        self._plugin_files = frozenset(files)

    def _plugin_own(self, value):
        """Whether `value` is made of functions written in those plugins' files."""
        def written_there(function):
            origin = self._origin(function) or "<"
            return not origin.startswith("<") and os.path.realpath(origin) in self._plugin_files

        return all(isinstance(f, types.FunctionType) and written_there(f)
                   for f in _underlying(value))

    def _index(self, entries):
        """Add `entries` to the groups compared by loops in C: the items of one dictionary,
        or one attribute (code, bases) of many objects. Each group: [kind, reader, keys or
        objects, labels, what, reference values]."""
        groups = {}
        for owner, key, label, what, value in entries:
            if what in _IN_DICTS:
                group = groups.setdefault(id(owner), ["dict", owner, [], [], what, []])
                group[2].append(key)
            else:
                group = groups.setdefault(what, ["attr", operator.attrgetter(_ATTRIBUTES[what]),
                                                 [], [], what, []])
                group[2].append(owner)
            group[3].append(label)
            group[5].append(value)
        self._groups += [[kind, reader, tuple(keys), tuple(labels), what, tuple(values)]
                         for kind, reader, keys, labels, what, values in groups.values()]
        self._sizes = tuple(len(n[1]) for n in self._namespaces)

    @staticmethod
    def _current(group):
        kind, reader, keys = group[0], group[1], group[2]
        if kind == "dict":
            return map(reader.get, keys, itertools.repeat(_MISSING))
        return map(reader, keys)

    def _process_state(self):
        return {"sys.settrace": sys.gettrace(), "sys.setprofile": sys.getprofile(),
                "threading.settrace": getattr(threading, "_trace_hook", None),
                "threading.setprofile": getattr(threading, "_profile_hook", None),
                "sys.excepthook": sys.excepthook, "threading.excepthook": threading.excepthook,
                "sys.unraisablehook": sys.unraisablehook,
                "sys.breakpointhook": sys.breakpointhook,
                "sys.monitoring": self._monitoring()}

    @staticmethod
    def _monitoring():
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is None:
            return ()
        return tuple(monitoring.get_tool(i) for i in range(6))

    # ---- the checks ---------------------------------------------------------------------
    def compare(self, where):
        """Report what changed since the snapshot; the fast path loops in C."""
        start = self._clock()
        try:
            self._compare(where)
        finally:
            self._spent += self._clock() - start

    def _compare(self, where):
        for group in self._groups:
            if any(map(operator.is_not, self._current(group), group[5])):
                self._compare_group(group, where)
        sizes = tuple(len(n[1]) for n in self._namespaces)
        if sizes != self._sizes:
            for label, namespace, names, rule in self._namespaces:
                for attr in set(namespace) - names:
                    value = namespace.get(attr)
                    if self._reported(rule, value):
                        self._problem(f"{label}.{attr} was added (seen {where})")
                    names.add(attr)
            self._sizes = sizes
        process = self._process_state()
        for name, value in process.items():
            if value is self._process[name] or value == self._process[name]:
                continue
            # A trace function or an exception hook a project's own tests or the environment's
            # plugins install (coverage's tracer, a conftest's excepthook) is theirs: only
            # one whose code is the solution's, or in no file, is reported. New monitoring
            # tools are always reported (their callbacks are not inspected).
            if name == "sys.monitoring" or self._suspicious(value):
                self._problem(f"{name} was changed to {self._origin_text(value)} "
                              f"(seen {where})")
        self._process = process

    def _compare_group(self, group, where):
        """Report the changed entries of a group, then take them as its new reference: a
        change is reported once."""
        current = tuple(self._current(group))
        what = group[4]
        for label, before, now in zip(group[3], group[5], current, strict=True):
            if now is not before and self._reported(what, now):
                self._problem(self._change(label, what, now, where))
        group[5] = current

    def _reported(self, what, value):
        """Whether a changed or added entry is reported. Module attributes (builtins, this
        module's names) and code are compared strictly; a class attribute of the runner,
        replaced or added, may be pytest's own rebinding (_runner_own) or an installed
        plugin's (_plugin_own); the test code's
        modules and classes ("test") may be changed by the tests with their own code; an
        attribute of a module-level object of the test code ("object") is reported only when
        it is code of the solution's, of no file, or built in (what the object's own class or
        library code stores there is theirs); threading's ("foreign") only when it is the
        solution's code or of no file."""
        if what == "attr":
            return not (self._runner_own(value) or self._plugin_own(value))
        if what == "class":
            return isinstance(value, _KINDS) and not (self._runner_own(value)
                                                      or self._plugin_own(value))
        if what == "object":
            return isinstance(value, _KINDS) and (
                isinstance(_underlying(value)[0], types.BuiltinFunctionType)
                or bool(self._suspicious(value)))
        if what == "test":
            return self._foreign_to_tests(value)
        if what == "foreign":
            return value is _MISSING or bool(self._suspicious(value))
        return True

    def _foreign_to_tests(self, value):
        """A test module's attribute or a test class's, replaced or added: reported when it
        was removed, or when it is callable code not written in the test files (a class: only
        one of the solution's), since the tests rebind their own names with their own code."""
        if value is _MISSING:
            return True
        if not callable(value):
            return False
        if isinstance(value, type):
            filename = getattr(sys.modules.get(value.__module__), "__file__", None)
            return isinstance(filename, str) and os.path.realpath(filename) in self._solution
        filename = self._origin(value)
        return filename is None or os.path.realpath(filename) not in self._test_files

    def _change(self, label, what, current, where):
        if what == "foreign" and current is not _MISSING:
            return f"{label} was replaced with {self._origin_text(current)} (seen {where})"
        if what in _IN_DICTS:
            verb = "removed" if current is _MISSING else "replaced"
            return f"{label} was {verb} (seen {where})"
        if what == "code":
            return f"the code of {label} was replaced (seen {where})"
        return f"the bases of {label} were replaced (seen {where})"

    def _origin(self, obj):
        """The file of the code behind a callable, or None for built-in code. Code that names
        an installed file (or a test's) but is not what that file's source compiles to was
        compiled at run time under that name (`compile`, `code.replace`, `types.CodeType`,
        a library's code generator), which any code can do: it is `<not the code of FILE>`,
        code of no file."""
        obj = _underlying(obj)[0]
        code = getattr(obj, "__code__", None)
        if isinstance(obj, type):  # what calling a class runs, else where it was written
            code = self._class_code(obj)
            if code is None or code.co_filename.startswith("<"):  # or a dataclass's __init__
                return self._class_file(obj)
        elif code is None and not isinstance(obj, types.BuiltinFunctionType):
            code = getattr(type(obj).__dict__.get("__call__"), "__code__", None)
        if not isinstance(code, types.CodeType):
            return None
        return self._code_origin(code)

    @staticmethod
    def _class_code(cls):
        """The code calling `cls` runs of its own (`__new__`, `__init__` written in Python),
        read from the classes' dictionaries: no attribute lookup runs the class's code."""
        for klass in cls.__mro__:
            for name in ("__new__", "__init__"):
                code = getattr(vars(klass).get(name), "__code__", None)
                if isinstance(code, types.CodeType):
                    return code
        return None

    @staticmethod
    def _class_file(cls):
        """The file of the module that defined `cls`, or None (a built-in type)."""
        if not cls.__flags__ & _HEAPTYPE:
            return None
        module = sys.modules.get(vars(cls).get("__module__") or "")
        filename = getattr(module, "__file__", None)
        return filename if isinstance(filename, str) else "<unknown module>"

    def _code_origin(self, code):
        """`_origin` of a code object."""
        filename = code.co_filename
        if filename.startswith("<"):
            return filename
        path = os.path.realpath(filename)
        if path in self._solution or not os.path.isfile(path) or self._genuine(code, path):
            return filename
        return f"<not the code of {filename}>"

    def _genuine(self, code, path):
        """Whether `code` is code of the file `path`: the snapshot's, or what the file's source
        compiles to, as Python or pytest's assertion rewriter compiles it, at that name and
        line (its instructions, names and constants are compared: a run-time copy of a real
        function's code under a new name, or of another's, is not)."""
        return self._known_code.get(id(code)) is code or code_of_file(code, path, self._config)


    def _suspicious(self, obj):
        """Code that comes from the solution's files, or from no file at all."""
        filename = self._origin(obj)
        if not self._judged_suspicious(filename):
            return None
        return self._relative(_resolved(filename))

    def _origin_text(self, obj):
        filename = self._origin(obj)
        return repr(obj) if filename is None else f"code from {self._relative(filename)}"

    def _relative(self, path):
        root = self._workspace + os.sep
        return path[len(root):] if path.startswith(root) else path

    def check_runner(self, config, where):
        """Hook implementations and import hooks whose code is the solution's."""
        self._config = config
        manager = config.pluginmanager
        for caller in list(vars(manager.hook).values()):
            get = getattr(caller, "get_hookimpls", None)
            if get is None:
                continue
            for impl in get():
                if id(impl) in self._hookimpls_checked:
                    continue
                self._hookimpls_checked.add(id(impl))
                function = _underlying(impl.function)[0]
                if not isinstance(function, types.FunctionType):
                    # pluggy calls any callable: a class runs its __init__ (added with
                    # `_add_hookimpl`, past `register`'s check that it is a routine)
                    self._problem(f"a hook implementation ({caller.name}) is a "
                                  f"{type(function).__name__}, not a function (seen {where})")
                culprit = self._suspicious(impl.function)
                if culprit:
                    self._problem(f"a hook implementation ({caller.name}) was registered "
                                  f"from {culprit} (seen {where})")
        for attr, value in list(vars(manager).items()):
            if callable(value):
                culprit = self._suspicious(value)
                if culprit:
                    self._problem(f"the plugin manager's {attr} was replaced with code from "
                                  f"{culprit} (seen {where})")
        for label, hooks in (("sys.meta_path", sys.meta_path), ("sys.path_hooks", sys.path_hooks)):
            for hook in list(hooks):
                if any(hook is old for old in self._import_hooks):
                    continue
                owner = hook if isinstance(hook, type) else type(hook)
                target = getattr(owner, "find_spec", None) or getattr(owner, "__init__", None) \
                    if label == "sys.meta_path" or isinstance(hook, type) else hook
                culprit = self._suspicious(target) if target is not None else None
                if culprit:
                    self._problem(f"{label} holds an import hook from {culprit} (seen {where})")

    def watch_property_tests(self, items):
        """Remember the settings of each hypothesis test as collected. Its engine reads them
        while it runs: the solution's code, called from a test's first example, can lower
        `max_examples` on that very object (or give the function another) and the test ends
        after an example it passes. No test changes its own settings while it runs."""
        for item in items:
            function = _underlying(vars(item).get("_obj"))[0]
            namespace = getattr(function, "__dict__", None) \
                if isinstance(function, types.FunctionType) else None
            chosen = namespace.get("_hypothesis_internal_use_settings") if namespace else None
            if chosen is not None:
                self._property_tests[item.nodeid] = (function, chosen,
                                                     self._property_values(chosen))

    @staticmethod
    def _property_values(chosen):
        values = []
        for name in _PROPERTY_SETTINGS:
            try:
                values.append(repr(getattr(chosen, name)))
            except Exception:  # an older hypothesis without this one
                values.append(None)
        return tuple(values)

    def _check_property_test(self, nodeid):
        function, chosen, values = self._property_tests[nodeid]
        now = vars(function).get("_hypothesis_internal_use_settings")
        if now is not chosen:
            self._problem(f"the hypothesis settings of {nodeid} were replaced (seen after it ran)")
            return
        current = self._property_values(now)
        if current != values:
            changed = [f"{name} {before} -> {after}" for name, before, after
                       in zip(_PROPERTY_SETTINGS, values, current, strict=True)
                       if before != after]
            self._problem(f"the hypothesis settings of {nodeid} were changed (seen after it ran): "
                          f"{', '.join(changed)}")

    # ---- hooks (registered as a plugin object when taskforge_pytest_plugin registers) ----
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        """The second observer: whether this phase raised, read from the CallInfo by the
        outermost wrapper, before any report exists."""
        self._check_call_path(item, call.when)
        if call.when == "call":
            self._check_instances(item)
        raised = call.excinfo is not None or bool(getattr(item, "_excinfo", None))
        if call.when == "setup":
            self._last_compared = None
        if raised:
            kind = call.excinfo.typename if call.excinfo is not None else "unittest failure"
            self._raised.setdefault(item.nodeid, f"{call.when}: {kind}")
            if call.when == "call":
                self._failed_compare[item.nodeid] = self._compared_at_failure(item, call)
        if call.when == "teardown":
            if item.nodeid in self._property_tests:
                self._check_property_test(item.nodeid)
            entry = {"kind": "test", "nodeid": item.nodeid,
                     "raised": self._raised.pop(item.nodeid, None)}
            compared = self._failed_compare.pop(item.nodeid, None)
            if compared is not None:
                entry["compared"] = compared
            self._emit(entry)
            # A comparison costs a millisecond or more: after a test only while comparing
            # has taken at most COMPARE_SHARE of the session (the checkpoints always compare).
            if self._spent <= COMPARE_SHARE * (self._clock() - self._started):
                self.compare(f"after {item.nodeid}")
        yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_assertrepr_compare(self, config, op, left, right):
        """The sides of a failing `==` in a rewritten assertion, as they were when it failed
        (pytest calls this only then); the explanation stays pytest's (None)."""
        if op == "==":
            self._last_compared = _sides(left, right)

    def _compared_at_failure(self, item, call):
        """What the comparison that failed the test set against each other: where it failed
        with an AssertionError, the sides of unittest's `assertEqual` it went through (the
        innermost), else those of the last failing `==` of a rewritten assertion; None where
        neither. The grader reads it for an expectation copy: honest code fails a changed
        test comparing the value it expected before with the one it expects now."""
        excinfo = call.excinfo
        if excinfo is None:
            excinfo = (getattr(item, "_excinfo", None) or [None])[0]
        if excinfo is None or not isinstance(excinfo.value, AssertionError):
            return None
        case = sys.modules.get("unittest.case")
        code = getattr(getattr(getattr(case, "TestCase", None), "assertEqual", None),
                       "__code__", None)
        sides = None
        tb = excinfo.tb
        trail = []
        while tb is not None:
            if code is not None and tb.tb_frame.f_code is code:
                where = tb.tb_frame.f_locals
                sides = _sides(where.get("first"), where.get("second"))
            trail.append(tb)
            tb = tb.tb_next
        if sides is None:
            sides = self._last_compared
        return sides if sides is not None else self._raised_at(item, trail, case)

    def _raised_at(self, item, trail, case):
        """Where the test's own code raised the AssertionError that failed it, where nothing
        was compared (`assert not f(x)`, `self.assertTrue(x)`): ["raised at", its file, the
        line], the line of the test function's frame that raised it or that called the
        unittest assertion raising it (the frames of unittest's case.py innermost are left
        out). None where the frame is not the test function's own code (by identity: a
        stub's `raise AssertionError`, code compiled under the test file's name)."""
        unittest_file = getattr(case, "__file__", None)
        while trail and unittest_file is not None \
                and trail[-1].tb_frame.f_code.co_filename == unittest_file:
            trail.pop()
        if not trail:
            return None
        raised = trail[-1]
        function = getattr(item, "obj", None)
        for _ in range(8):  # down through decorators that keep `__wrapped__`
            function = getattr(function, "__func__", function)
            if getattr(function, "__code__", None) is raised.tb_frame.f_code:
                return ["raised at", self._relative(raised.tb_frame.f_code.co_filename),
                        raised.tb_lineno]
            function = getattr(function, "__wrapped__", None)
            if function is None:
                break
        return None

    def _check_call_path(self, item, when):
        """The frames between the runner's `call_and_report` and this hook: pluggy's and
        pytest's own. Code of the solution's (or of no file) among them wraps the hook call
        and could hide this observer's view of the test (it decides what reaches here)."""
        frame = _getframe(2)
        for _ in range(40):
            if frame is None or frame.f_code is self._call_and_report:
                return
            origin = self._code_origin(frame.f_code)
            if self._judged_suspicious(origin):
                self._problem(f"the report of {item.nodeid} ({when}) went through "
                              f"{self._relative(origin)}")
                return
            frame = frame.f_back

    def _check_instances(self, item):
        """The test's item and the session, as instances: what a solution stores there is
        found by pytest before its class's code (`session.gethookproxy`, which every
        `item.ihook` call goes through; `item.runtest`), and no snapshot holds instances."""
        for label, obj in (("the session", item.session), (item.nodeid, item)):
            for attr, value in list(vars(obj).items()):
                culprit = self._suspicious(value) if callable(value) else None
                if culprit is None and not isinstance(value, _KINDS):
                    kind = type(value)
                    culprit = self._suspicious(kind) if kind.__flags__ & _HEAPTYPE else None
                if culprit:
                    self._problem(f"{label}'s {attr} was set to code from {culprit} "
                                  f"(seen when {item.nodeid} ran)")

    def _judged_suspicious(self, origin):
        """`_suspicious`'s verdict on an `_origin`."""
        if origin is None:
            return False
        path = _resolved(origin)
        return path in self._solution or origin.startswith("<") or not os.path.isfile(path)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session):
        self.compare("after collection")
        self.watch_test_code()
        self.watch_property_tests(session.items)
        self.check_runner(session.config, "after collection")

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session):
        self.compare("before the results were written")
        self.check_runner(session.config, "before the results were written")
        yield

    def finish(self, config):
        """Called by taskforge_pytest_plugin's last pytest_unconfigure: after the JUnit XML."""
        self.compare("at the end")
        self.check_runner(config, "at the end")
        self._emit({"kind": "end"})
