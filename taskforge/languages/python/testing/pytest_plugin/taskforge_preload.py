"""The environment's modules a zygote imports ahead, each under watch (`taskforge_zygote.py`).

A run forked from a zygote imports the project's code and tests anew; what its collection
imports from the environment (the interpreter's standard library, the venv's site-packages)
is the same files in every run: humanize's test files import freezegun, which pulls in
asyncio, dateutil and sqlite3, and pytest-codspeed's configuration imports rich, ~25% of
a humanize confirmation run. Imported once in the zygote, every run forked from it finds
them imported, as the whole suite's tests find them (its collection imports every test
file before the first test runs). A run must not be able to tell otherwise, so a module
is imported ahead only if its import reads nothing that differs from one run to the next
and changes nothing that was there before it:

- reads: the working directory (`os.getcwd`, any relative path), `sys.argv`, `__main__`,
  `sys.path` outside the import system (a lookup of installed distributions would miss the
  run's own), files where runs differ (the warm root that holds their workspaces, HOME,
  TMPDIR, /tmp, /proc, /dev), the environment variables a run sets otherwise (HOME, TMPDIR,
  PWD, PYTHONPATH, TASKFORGE_*), or all of them at once. Any other variable it reads is
  recorded with its value: a run whose own differs, or that sets or removes one (a test
  module that sets a variable before it imports a library that reads it), does not use the
  zygote's modules (`taskforge_zygote._child`);
- effects: a warning (under `filterwarnings = error` the import fails in the run), a thread,
  a signal handler, a sys hook, the random state, the working directory, umask or locale,
  a builtin, a binding of any module imported before it or the size of one of its containers
  (a registry such as copyreg's), caches aside, the root logger or an existing logger, an
  environment variable it sets, and any extension module but the standard library's
  (`STDLIB_EXTENSIONS`): a C extension may read anything when it loads.

`choose` finds the names that qualify, each tried in a fork (a refused import leaves its
effects in the process that made it); `import_chosen` then imports them in the zygote itself.
Imports nothing from taskforge (it runs in the project's environment).
"""

from __future__ import annotations

import builtins
import contextlib
import gc
import importlib
import io
import json
import os
import random
import signal
import sys
import threading
import types
import warnings

# Variables whose value a run sets otherwise than the zygote's (runner.environment_variables)
UNSTABLE_ENV = frozenset({"HOME", "TMPDIR", "TEMP", "TMP", "PWD", "OLDPWD", "PYTHONPATH"})
UNSTABLE_PREFIXES = ("TASKFORGE_",)
# Where runs differ from each other besides the warm root that holds their workspaces,
# results and homes (`Watch`'s `unstable_roots`): the process itself, its devices.
UNSTABLE_ROOTS = ("/proc", "/dev")
# The standard library's extension modules that read nothing of the process's environment
# or files when they load (readline reads ~/.inputrc, curses the terminal: not listed).
STDLIB_EXTENSIONS = frozenset({
    "_asyncio", "_bisect", "_blake2", "_bz2", "_codecs_cn", "_codecs_hk", "_codecs_iso2022",
    "_codecs_jp", "_codecs_kr", "_codecs_tw", "_contextvars", "_crypt", "_csv", "_ctypes",
    "_datetime", "_decimal", "_elementtree", "_hashlib", "_heapq", "_json", "_lsprof", "_lzma",
    "_md5", "_multibytecodec", "_multiprocessing", "_opcode", "_pickle", "_posixshmem",
    "_posixsubprocess", "_queue", "_random", "_sha1", "_sha2", "_sha256", "_sha3", "_sha512",
    "_socket", "_sqlite3", "_ssl", "_statistics", "_struct", "_typing", "_uuid", "_zoneinfo",
    "array", "audioop", "binascii", "cmath", "fcntl", "grp", "math", "mmap", "pyexpat",
    "resource", "select", "termios", "unicodedata", "zlib", "_interpreters",
    "_interpqueues", "_interpchannels",
})
# Module-level containers any import may fill besides those named caches (`*cache*`, kept
# for speed alone): inspect's maps of module files, and registries keyed by what the
# importing module defines itself (`typing.overload` keeps each overloaded function's own
# overloads), which a run's import fills alike: (module, name).
CACHES = frozenset({
    ("inspect", "modulesbyfile"), ("inspect", "_filesbymodname"),
    ("warnings", "_filters_version"), ("typing", "_overload_registry"),
})
# The import system's own bookkeeping, and what `effects` compares otherwise.
SKIPPED_MODULES = frozenset({
    "sys", "builtins", "importlib._bootstrap", "importlib._bootstrap_external", "_imp",
    "zipimport", "_frozen_importlib", "_frozen_importlib_external", "__main__", "__mp_main__",
})


class _Refused(Exception):
    """Raised where a check fails during an import, or after it."""


class Watch:
    """The reads and effects of the imports made within it (`refusal` says the first that
    disqualifies, `reads` the variables read and their values), and what the process looked
    like before each (`effects`). `strict`: raise at a disqualifying read (a trial); the
    zygote's own pass records it only (its trial already passed it)."""

    def __init__(self, unstable_roots: list[str], strict: bool) -> None:
        self.unstable_roots = [r.rstrip("/") for r in (*UNSTABLE_ROOTS, *unstable_roots) if r]
        self.strict = strict
        self.reads: dict[str, str | None] = {}
        self.refusal: str | None = None
        self.chain: list[str] = []  # the modules being imported at the refusal, innermost first
        self.sentinels: list[object] = []  # sys.argv and __main__ while importing
        self._saved: list[tuple[object, str, object]] = []
        self._real_environ = os.environ

    def refuse(self, reason: str) -> None:
        if self.refusal is None:
            self.chain = _importing()
            self.refusal = f"{reason} (importing {' < '.join(self.chain) or '?'})"
        if self.strict:
            raise _Refused(self.refusal)

    # -- reads ----------------------------------------------------------------------------
    def env(self, key: object) -> None:
        name = key.decode(errors="replace") if isinstance(key, bytes) else str(key)
        if name in UNSTABLE_ENV or name.startswith(UNSTABLE_PREFIXES):
            self.refuse(f"reads ${name}")
        else:
            self.reads.setdefault(name, self._real_environ.get(name))

    def path(self, value: object, what: str) -> None:
        if isinstance(value, int):
            return  # a descriptor it already holds
        try:
            text = os.fsdecode(value)
        except TypeError:
            return
        if not os.path.isabs(text):
            self.refuse(f"{what} a relative path ({text!r})")
            return
        norm = os.path.normpath(text)
        for root in self.unstable_roots:
            if norm == root or norm.startswith(root + "/"):
                self.refuse(f"{what} {norm}")
                return

    def __enter__(self) -> Watch:
        watch = self
        real_environ = os.environ

        class RecordingEnviron(type(real_environ)):  # type: ignore[misc]
            def __getitem__(self, key):
                watch.env(key)
                return super().__getitem__(key)

            def __iter__(self):
                watch.refuse("reads every environment variable")
                return super().__iter__()

        environ = RecordingEnviron.__new__(RecordingEnviron)
        environ.__dict__.update(real_environ.__dict__)  # the same variables, the same dict
        self._set(os, "environ", environ)

        def reader(function, what, default=None):
            def read(*args, **kwargs):
                watch.path(args[0] if args else kwargs.get("path", default), what)
                return function(*args, **kwargs)
            return read

        def refusing(what):
            def refuse(*args, **kwargs):
                watch.refuse(what)
                raise _Refused(what)
            return refuse

        for name in ("stat", "lstat", "access", "open", "readlink"):
            if hasattr(os, name):
                self._set(os, name, reader(getattr(os, name), "reads"))
        for name in ("listdir", "scandir"):
            self._set(os, name, reader(getattr(os, name), "lists", "."))
        self._set(os, "getcwd", refusing("reads the working directory"))
        self._set(os, "getcwdb", refusing("reads the working directory"))
        self._set(os, "chdir", refusing("changes the working directory"))
        opener = reader(builtins.open, "opens")
        self._set(builtins, "open", opener)
        self._set(io, "open", opener)
        argv = _guarded_argv(watch)
        self._set(sys, "argv", argv)
        self._set(sys, "path", _importers_only_path(watch))
        main = _MainSentinel(watch)
        self._saved.append((sys.modules, "__main__", sys.modules.get("__main__")))
        sys.modules["__main__"] = main
        self.sentinels = [argv, main]
        return self

    def _set(self, owner: object, name: str, value: object) -> None:
        self._saved.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def __exit__(self, *exc: object) -> None:
        for owner, name, value in reversed(self._saved):
            if owner is sys.modules:
                sys.modules["__main__"] = value  # type: ignore[assignment]
            else:
                setattr(owner, name, value)
        self._saved.clear()

    def kept_sentinels(self) -> bool:
        """Whether anything the imports made still refers to sys.argv or `__main__` as they
        were while importing (multiprocessing's `__mp_main__`, `ARGV = sys.argv`)."""
        mine = (self.__dict__, self.sentinels)
        return any(not isinstance(holder, types.FrameType) and holder is not mine[0]
                   and holder is not mine[1]
                   for holder in gc.get_referrers(*self.sentinels))


_LIST_READS = ("__getitem__", "__iter__", "__len__", "__contains__", "__reversed__", "index",
               "count", "copy", "__eq__", "__add__", "__repr__")
_LIST_CHANGES = ("__setitem__", "__delitem__", "__iadd__", "insert", "append", "extend",
                 "remove", "pop", "clear", "sort", "reverse")


class _Watched(list):
    """A list that tells `on_read` and `on_change` (with the frame that called) before each
    read or change: sys.argv and sys.path while importing."""

    def __init__(self, items, on_read, on_change) -> None:
        super().__init__(items)
        self._on = {"read": on_read, "change": on_change}


def _watched(name: str, kind: str):
    def method(self, *args, **kwargs):
        self._on[kind](sys._getframe(1))
        return getattr(list, name)(self, *args, **kwargs)
    method.__name__ = name
    return method


for _name in _LIST_READS:
    setattr(_Watched, _name, _watched(_name, "read"))
for _name in _LIST_CHANGES:
    setattr(_Watched, _name, _watched(_name, "change"))


def _guarded_argv(watch: Watch) -> _Watched:
    """sys.argv while importing: a run's is pytest's, the zygote's its own; any use is refused."""
    def refuse(_frame) -> None:
        watch.refuse("reads sys.argv")
    return _Watched(sys.argv, refuse, refuse)


def _importers_only_path(watch: Watch) -> _Watched:
    """sys.path while importing: the import system reads it (that is how a module is found,
    and `_child` checks that a run finds the same); any other reader (a lookup of installed
    distributions) or a change is refused."""
    def read(frame) -> None:
        if not frame.f_code.co_filename.startswith("<frozen importlib"):
            watch.refuse("reads sys.path")

    def change(_frame) -> None:
        watch.refuse("changes sys.path")
    return _Watched(sys.path, read, change)


class _MainSentinel(types.ModuleType):
    """`__main__` while importing: a run's is pytest's, the zygote's is itself, so any read
    of it (or a reference kept to it: multiprocessing's `__mp_main__`) is refused."""

    def __init__(self, watch: Watch) -> None:
        super().__init__("__main__")
        object.__setattr__(self, "_taskforge_watch", watch)

    def __getattribute__(self, name):
        if name != "_taskforge_watch":
            object.__getattribute__(self, "_taskforge_watch").refuse("reads __main__")
        return object.__getattribute__(self, name)


def _importing() -> list[str]:
    """The modules being imported now, innermost first (their `<module>` frames)."""
    names, frame = [], sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "<module>":
            name = str(frame.f_globals.get("__name__", "?"))
            if name != "__main__":
                names.append(name)
        frame = frame.f_back
    return names


# -- effects --------------------------------------------------------------------------------
def _threads() -> int:
    try:
        tasks = len(_REAL_LISTDIR("/proc/self/task"))
    except OSError:
        tasks = 0
    return threading.active_count() * 1000 + tasks


_REAL_LISTDIR = os.listdir


_CONTAINERS = (dict, list, set)


def _module_state(module: types.ModuleType) -> tuple[dict, dict]:
    """A module's bindings (name -> id of the object) and the sizes of those that are
    containers: built by C loops where it can (this runs twice an import, over every module;
    what is exempt, `_exempt`, is sorted out only where something differs)."""
    try:
        namespace = vars(module)
        keys = list(namespace)
        values = list(namespace.values())
    except TypeError:
        return {}, {}
    bindings = dict(zip(keys, map(id, values), strict=True))
    sizes = {key: len(value) for key, value in zip(keys, values, strict=True)
             if type(value) in _CONTAINERS}
    return bindings, sizes


def _exempt(module: str, key: object) -> bool:
    """A binding any import may change: a cache (by its name, or listed in CACHES), the
    interpreter's bookkeeping (dunders)."""
    return not isinstance(key, str) or (module, key) in CACHES or "cache" in key.lower() \
        or (key.startswith("__") and key.endswith("__"))


def effects() -> dict:
    """What an import must leave as it found it (see the module's docstring)."""
    state: dict = {
        "threads": _threads(),
        "signals": tuple((int(s), id(signal.getsignal(s))) for s in sorted(signal.valid_signals())
                         if _has_handler(s)),
        "sys": (*(id(getattr(sys, n, None)) for n in SYS_HOOKS), id(sys.gettrace()),
                id(sys.getprofile()), sys.getrecursionlimit(), sys.getswitchinterval(),
                sys.dont_write_bytecode, tuple(map(id, sys.meta_path)),
                tuple(map(id, sys.path_hooks))),
        "cwd": _REAL_GETCWD(),
        "umask": _umask(),
        "builtins": {k: id(v) for k, v in vars(builtins).items()},
        "gc": (gc.isenabled(), gc.get_threshold()),
        "environ": dict(os.environ),
        "modules": {name: _module_state(module) for name, module in list(sys.modules.items())
                    if name not in SKIPPED_MODULES and isinstance(module, types.ModuleType)},
    }
    locale = sys.modules.get("locale")
    if locale is not None:
        with contextlib.suppress(Exception):
            state["locale"] = locale.setlocale(locale.LC_ALL)
    faulthandler = sys.modules.get("faulthandler")
    if faulthandler is not None:
        state["faulthandler"] = faulthandler.is_enabled()
    logging = sys.modules.get("logging")
    if logging is not None:
        manager = logging.Logger.manager
        state["loggers"] = {name: (logger.level, tuple(map(id, logger.handlers)),
                                   logger.disabled, logger.propagate)
                            for name, logger in [("", logging.root),
                                                 *list(manager.loggerDict.items())]
                            if isinstance(logger, logging.Logger)}
        state["logging"] = (manager.disable, id(logging.getLoggerClass()))
    return state


_REAL_GETCWD = os.getcwd
SYS_HOOKS = ("excepthook", "displayhook", "unraisablehook", "breakpointhook", "stdin", "stdout",
             "stderr")


def _has_handler(s: signal.Signals) -> bool:
    try:
        signal.getsignal(s)
        return True
    except (ValueError, OSError):
        return False


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def changed(before: dict, after: dict, imported: set[str]) -> str | None:
    """What an import changed that it must not have (None: nothing)."""
    for key in ("threads", "signals", "sys", "cwd", "umask", "builtins", "gc",
                "environ", "locale", "faulthandler", "logging"):
        if before.get(key) != after.get(key):
            return f"changes {key}"
    for name, (bindings, sizes) in before["modules"].items():
        now = after["modules"].get(name)
        if now is None:
            continue  # removed from sys.modules: compared no more
        new_bindings, new_sizes = now
        if bindings != new_bindings:
            for key in set(bindings) | set(new_bindings):
                if bindings.get(key) == new_bindings.get(key) or _exempt(name, key):
                    continue
                value = getattr(sys.modules.get(name), str(key), None)
                if isinstance(value, types.ModuleType) and value.__name__ in imported \
                        and key not in bindings:
                    continue  # a submodule bound on its package by its first import
                return f"rebinds {name}.{key}"
        if sizes != new_sizes:
            for key, size in sizes.items():
                if new_sizes.get(key, size) != size and not _exempt(name, key):
                    return f"fills {name}.{key}"
    # (a logger of its own it may make as it likes: a run that imports it makes the same)
    old_loggers = before.get("loggers", {})
    for name, logger in after.get("loggers", {}).items():
        if name in old_loggers and old_loggers[name] != logger:
            return f"reconfigures the logger {name or 'root'!r}"
    return None


class _ExtensionGuard:
    """A finder in front of the others: an extension module outside STDLIB_EXTENSIONS is
    refused before it loads."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch

    def find_spec(self, name, path=None, target=None):
        from importlib.machinery import ExtensionFileLoader, PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is not None and isinstance(spec.loader, ExtensionFileLoader) \
                and name not in STDLIB_EXTENSIONS:
            self.watch.refuse(f"loads the extension module {name}")
            raise _Refused(self.watch.refusal)
        return None  # found as usual by the finders after this one


def _import_one(name: str, watch: Watch, before: dict | None) -> tuple[str | None, dict | None]:
    """Import `name` under `watch`: the reason it does not qualify (None: it does) and, where
    `before` gives the `effects` it must leave as they were, those after it."""
    before_names = set(sys.modules)
    # (not in `effects`: a fork reseeds `random`, and `before` may come from the parent)
    drawn = random.getstate()
    guard = _ExtensionGuard(watch)
    with warnings.catch_warnings(record=True) as caught:
        # (catch_warnings gives back the filters and `showwarning` it found: what the import
        # did to them would be lost, so it must have done nothing)
        warnings.simplefilter("always")
        filters, show = list(warnings.filters), warnings.showwarning
        sys.meta_path.insert(0, guard)
        try:
            with watch:
                importlib.import_module(name)
        except _Refused:
            pass
        except BaseException as e:  # an import that fails: a run's would fail too
            watch.refusal = watch.refusal or f"does not import ({type(e).__name__}: {e})"
        finally:
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(guard)
        if not watch.refusal and (warnings.filters != filters or warnings.showwarning is not show):
            watch.refusal = "changes how warnings are filtered or shown"
    if not watch.refusal and random.getstate() != drawn:
        watch.refusal = "draws from random"
    if watch.refusal:
        return watch.refusal, None
    if caught:
        first = caught[0]
        return f"warns on import ({first.category.__name__}: {str(first.message)[:120]})", None
    if before is None:
        return None, None
    after = effects()
    why = changed(before, after, set(sys.modules) - before_names)
    if why is None and watch.kept_sentinels():
        why = "keeps sys.argv or __main__ as they were while importing"
    return why, after


def _top(name: str) -> str:
    return name.split(".", 1)[0]


def choose(names: list[str], unstable_roots: list[str]) -> tuple[list[str], dict[str, str]]:
    """The names of `names` that qualify, in order, and those refused with the reason. Each
    import is tried in a fork of the process that holds the imports accepted before it: an
    import that qualifies goes on as that line (its parent waits for it, then ends), one that
    does not is dropped with its fork (what it did stays there) and its parent goes on. A
    refusal takes with it every module its attempt left imported and every later name of the
    packages it was importing (which would fail alike). This process imports nothing."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the line: never returns
        code = 1
        try:
            os.close(read)
            with contextlib.suppress(Exception):
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)
            _line(names, unstable_roots, write)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        lines = pipe.read().splitlines()
    os.waitpid(pid, 0)
    refused: dict[str, str] = {}
    accepted: list[str] | None = None
    for line in lines:
        with contextlib.suppress(ValueError):
            kind, value = json.loads(line)
            if kind == "refused":
                refused[value[0]] = value[1]
            elif kind == "accepted":
                accepted = value
    if accepted is None:  # the line died: nothing is known to qualify
        return [], refused
    return accepted, refused


TRY_SECONDS = 60  # an import that takes longer is refused


def _line(names: list[str], unstable_roots: list[str], out: int) -> None:
    """`choose`'s line of forks (see there); what it finds goes to `out`, a JSON line each:
    ["refused", [name, why]], and last, from the process that holds them all,
    ["accepted", [names]]."""
    skip: set[str] = set()
    for i, name in enumerate(names):
        if name in sys.modules or name in skip:
            continue
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the attempt: goes on as the line if it qualifies
            os.close(read)
            signal.alarm(TRY_SECONDS)
            before = set(sys.modules)
            watch = Watch(unstable_roots, strict=True)
            # (what it must leave as it found it, as it found it: a fork changes threading's
            # locks, random's state and what else registered `os.register_at_fork`)
            why, _after = _import_one(name, watch, effects())
            signal.alarm(0)
            if why:
                tops = {_top(name), *map(_top, watch.chain)}
                gone = [name, *sorted(set(sys.modules) - before),
                        *(n for n in names[i + 1:] if _top(n) in tops)]
                with os.fdopen(write, "w") as verdict:
                    json.dump([*gone, why], verdict)
                os._exit(0)
            os.write(write, b"[]")
            os.close(write)
            continue
        os.close(write)
        with os.fdopen(read, "rb") as verdict:
            said = verdict.read()
        if said == b"[]":  # it qualified and goes on as the line: this one is done
            os.waitpid(pid, 0)
            os._exit(0)
        os.waitpid(pid, 0)
        try:
            *gone, why = json.loads(said)
        except ValueError:  # it died or ran out of time
            gone, why = [name], "its import did not end within its time"
        for refused in gone:
            if refused not in skip:
                skip.add(refused)
                os.write(out, (json.dumps(["refused", [refused, str(why)[:300]]]) + "\n")
                         .encode())
    accepted = [n for n in names if n in sys.modules and n not in skip]
    os.write(out, (json.dumps(["accepted", accepted]) + "\n").encode())


def import_chosen(names: list[str], unstable_roots: list[str]
                  ) -> tuple[list[str], dict[str, str | None], str | None]:
    """Import `names` (what `choose` accepted) in this process, recording the variables they
    read. Returns (what was imported, the reads, a reason if an import did not go as its trial
    did: the process then holds what it should not, and must not fork runs)."""
    watch = Watch(unstable_roots, strict=False)
    imported = []
    for name in names:
        if name not in sys.modules:
            before = _threads()
            why, _ = _import_one(name, watch, None)
            if why or _threads() != before:
                return imported, watch.reads, why or "starts a thread"
        imported.append(name)
    return imported, watch.reads, None
