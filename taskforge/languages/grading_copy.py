"""What every language's grader does to its copy of a solution beside its own rules: links
that leave the copy are taken out before the tests run, and the test code is compared
afterwards with what ran.

A symlink the solution brings that points outside its workspace reads the host where the
sandbox shows it (under `none`, the cache's snapshot of the original code: a link to it scored
1.0 in session 64's red team), and one that points nowhere makes reading the copy fail. Both
are removed from the copy and named; links within the copy stay (projects have them).

The test files are restored before the run, but the copy is writable while the tests run:
code of the solution that rewrites a test file not loaded yet (node's runner starts a
process per file; vitest imports each when it runs it; pytest imports a test helper after
the module that imports the solution) had every test of it pass with the feature still
missing (the same red team). So the restored test code is bound read-only where the sandbox
binds (bwrap, docker: `read_only_binds`), and under any sandbox the grader keeps the digest
of each such file and compares after the run: a file changed or gone disqualifies. (The
comparison alone misses a file put back before the run ends: read-only binds do not.)

And what the expectation copies share (each language's `grading/expectations.py`): a few
FAIL_TO_PASS tests changed in place to expect another value, in a second clean copy of the
solution run after the first at its path; `Copy`, writing them, what their passing means and
how the two runs' outcomes combine.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from taskforge.model import Finding, Outcome
from taskforge.workspace import copy_tree


def remove_escaping_links(copy: Path) -> list[str]:
    """Remove every symlink under `copy` that resolves outside it or to nothing; return what
    was removed, a line each ("removed link X -> T: ...")."""
    removed = []
    root = os.path.realpath(copy)
    for directory, dirs, files in os.walk(copy):
        for name in [*dirs, *files]:
            path = os.path.join(directory, name)
            if not os.path.islink(path):
                continue
            target = os.readlink(path)
            resolved = os.path.realpath(path)
            rel = Path(path).relative_to(copy).as_posix()
            if resolved != root and not resolved.startswith(root + os.sep):
                why = "it points outside the workspace"
            elif not os.path.exists(resolved):
                why = "it points to nothing"
            else:
                continue
            os.unlink(path)
            removed.append(f"removed link {rel} -> {target}: {why}")
        # (os.walk does not descend into linked directories: they are judged above)
    return sorted(removed)


# Bound read-only one by one: past this many test-code files, the rest rely on the comparison
# after the run (a mount a file: thousands would slow every grading run).
MOST_READ_ONLY = 512


def read_only_binds(copy: Path, paths: Iterable[str]) -> tuple[tuple[Path, ...],
                                                               tuple[Path, ...]]:
    """What the sandbox binds for the test code of `paths` (relative to `copy`): the files
    read-only (regular files, links within the copy staying writable through their target;
    at most MOST_READ_ONLY), and the directories that hold them, each bound writable onto
    itself. A mount point cannot be renamed: without those binds a test directory moved
    aside and made anew held forged test files in place of the bound ones (the review of
    session 64's change did it under bwrap)."""
    files = tuple(p for p in (copy / rel for rel in sorted(paths))
                  if p.is_file() and not p.is_symlink())[:MOST_READ_ONLY]
    directories = {parent for file in files for parent in file.parents
                   if parent != copy and parent.is_relative_to(copy)}
    return files, tuple(sorted(directories))


def digests(copy: Path, paths: Iterable[str]) -> dict[str, str | None]:
    """The sha256 of each of `paths` (relative to `copy`) as it is now; None where missing."""
    found: dict[str, str | None] = {}
    for rel in paths:
        try:
            found[rel] = hashlib.sha256((copy / rel).read_bytes()).hexdigest()
        except OSError:
            found[rel] = None
    return found


def rewritten_during_run(copy: Path, before: dict[str, str | None]) -> list[Finding]:
    """Test-code files the run changed or removed (`before`: their `digests` just before it).
    Disqualifying: the tests that ran may not be the ones restored."""
    after = digests(copy, before)
    changed = sorted(rel for rel, digest in before.items() if after[rel] != digest)
    if not changed:
        return []
    return [Finding(f"test files were rewritten while the tests ran: {', '.join(changed[:3])}"
                    f"{', ...' if len(changed) > 3 else ''}", True)]


def linked(root: Path, rel: str) -> bool:
    """Whether `rel` or a directory on its way is a symbolic link."""
    parts = Path(rel).parts
    return any(root.joinpath(*parts[:n]).is_symlink() for n in range(1, len(parts) + 1))


def suffix(rng: random.Random) -> str:
    """The random word that ends a canary's name."""
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(6))


def original_with(original: Path, files: Mapping[str, bytes], dest: Path) -> list[str]:
    """`original` (the snapshot) copied to `dest` with `files` (the test files the expectation
    copies changed, by path) written over it, where a changed test reported passed runs
    again; the files written: never one through a link (the snapshot's `tests/` may be one),
    whose changed tests are then not run again, so not forgiven."""
    copy_tree(original, dest)
    written = [rel for rel in files if not linked(dest, rel)]
    for rel in written:
        (dest / rel).unlink(missing_ok=True)
        (dest / rel).write_bytes(files[rel])
    return written


@dataclass(frozen=True)
class Copy:
    """A FAIL_TO_PASS test (`test_id`) whose expected literal was changed in place from `was`
    to `now` (their source text); `runs_as`: its id in the copies' run, where the new value
    gives it another (pytest makes a case's id from its values); `two_valued`: its value has
    one other (a boolean; an assertion turned into its opposite, `was` and `now` its two
    forms), which a wrong solution may well give: its pass in the copies' run says something
    only after a pass in the grading run; `lines`: the first and last line of the changed
    assertion, where honest code's failure of it is raised (where a language reads that)."""

    test_id: str
    was: str
    now: str
    runs_as: str | None = None
    two_valued: bool = False
    lines: tuple[int, int] | None = None

    @property
    def run_id(self) -> str:
        """Its id in the copies' run."""
        return self.runs_as or self.test_id


def write_changed(root: Path, changed: Mapping[str, bytes]) -> None:
    """Write the test files a language's `draw_expectation_copies` changed into `root`."""
    for rel, data in changed.items():
        (root / rel).write_bytes(data)


def copy_findings(copies: Iterable[Copy], outcomes: Mapping[str, Outcome],
                  forgiven: set[str], first: Mapping[str, Outcome] | None = None
                  ) -> list[Finding]:
    """A changed test reported passed (`outcomes`), and not passing on the original code
    too (`forgiven`), disqualifies; a two-valued one only where it passed in the grading run
    (`first`) as well: a wrong solution fails the test there and may pass the other value."""
    return [Finding(f"expectation copy {c.test_id} passed: its "
                    f"{'assertion turned' if c.two_valued else 'expected value changed'} from "
                    f"{_short(c.was)} to {_short(c.now)}, which only a solution answering with "
                    f"what the test expects passes", True)
            for c in copies if outcomes.get(c.test_id) == "passed" and c.test_id not in forgiven
            and (not c.two_valued or (first or {}).get(c.test_id) == "passed")]


def _short(text: str, most: int = 80) -> str:
    """A changed literal as a finding names it: one line, at most `most` characters."""
    line = text if "\n" not in text else " ".join(text.split())
    return line if len(line) <= most else line[:most - 3] + "..."


@dataclass(frozen=True)
class Original:
    """What the original code did in the copies' place: each language's
    `run_on_the_original`, made only where the copies' run needs it."""

    outcomes: dict[str, Outcome]
    compared: dict[str, list]  # test id as run -> what the comparison that failed it compared


def doubtful_copies(copies: Iterable[Copy], first: Mapping[str, Outcome],
                    second: Mapping[str, Outcome], compared: Mapping[str, list],
                    honest: Callable[[Copy, list | None], bool]) -> list[Copy]:
    """The changed tests that passed in the grading run (`first`) and not in the copies' run
    (`second`), whose failure there (`compared`, by the task's ids) `honest` cannot call
    honest code's: comparing the value the test expected before with the one it expects
    now. Honest code passed the test, so what it computes equals the value before."""
    return [c for c in copies if first.get(c.test_id) == "passed"
            and second.get(c.test_id) != "passed" and not honest(c, compared.get(c.test_id))]


def unlike_the_original(doubtful: Iterable[Copy], compared: Mapping[str, list],
                        original: Original | None,
                        agree: Callable[[list | None, list | None], bool]) -> set[str]:
    """Of the `doubtful` copies, those that did not fail as the original code failed them
    (`agree` on what each comparison compared); all of them where the original code could
    not run (fail closed)."""
    if original is None:
        return {c.test_id for c in doubtful}
    return {c.test_id for c in doubtful if original.outcomes.get(c.run_id) == "passed"
            or not agree(compared.get(c.test_id), original.compared.get(c.run_id))}


def judged_on_the_original(copies: list[Copy], first: Mapping[str, Outcome],
                           second: Mapping[str, Outcome], compared: Mapping[str, list],
                           honest: Callable[[Copy, list | None], bool],
                           agree: Callable[[list | None, list | None], bool],
                           run_original: Callable[[list[Copy]], Original | None],
                           ) -> Judged:
    """Of the changed tests passing in the copies' run (`second`), those that pass on the
    original code too (forgiven: a matcher equal to anything, a call-site reader in the
    original); of those that passed in the grading run (`first`) and not in the copies'
    run, those that failed neither as honest code does (`honest`: comparing the value
    expected before with the one expected now) nor as the original code does (`agree`):
    unlike, a stub that read the answer in the grading run only, a coin's luck where one
    FAIL_TO_PASS test is all the task has. One run of the original code with the changed
    test files (`run_original`, given the copies found), made only where either is found;
    where it cannot run, nothing is forgiven and everything unlike stays so (fail closed)."""
    passing = [c for c in copies if second.get(c.test_id) == "passed"]
    doubtful = doubtful_copies(copies, first, second, compared, honest)
    if not passing and not doubtful:
        return Judged()
    original = run_original([*passing, *doubtful])
    forgiven = {c.test_id for c in passing
                if original is not None and original.outcomes.get(c.run_id) == "passed"}
    return Judged(forgiven, unlike_the_original(doubtful, compared, original, agree))


def unlike_findings(copies: Iterable[Copy], unlike: set[str]) -> list[Finding]:
    """A changed test that failed otherwise than honest code does disqualifies: a stub that
    read the answer in the grading run and not in the copies' run (a coin's luck). The
    values are not named: the one before is the answer."""
    return [Finding(f"expectation copy {c.test_id} failed, but not as the original code "
                    f"fails it: honest code compares the value the test expected before with "
                    f"the one it expects now", True) for c in copies if c.test_id in unlike]


def in_both_runs(first: Mapping[str, Outcome], second: Mapping[str, Outcome],
                 copies: Iterable[Copy], excused: Iterable[str] = ()) -> dict[str, Outcome]:
    """The grading's outcomes: a test passed where it passed in both runs, a changed one
    where it passed in the first (in the second it expected another value), so a stub that
    cheats in one run of two gains nothing. `excused`: tests whose first word stands too
    (they fail in the second run on the original code as well)."""
    changed = {c.test_id for c in copies} | set(excused)
    return {t: "failed" if o == "passed" and t not in changed and second.get(t) != "passed"
            else o for t, o in first.items()}


class CheckedRun(Protocol):
    """What a language's grading run reports to `graded_with_copies`."""

    @property
    def outcomes(self) -> Mapping[str, Outcome]: ...  # by the task's ids
    @property
    def timed_out(self) -> bool: ...
    @property
    def findings(self) -> Iterable[Finding]: ...


Run = TypeVar("Run", bound=CheckedRun)


@dataclass(frozen=True)
class Judged:
    """What the copies' run means, beside a changed test that passed: `forgiven`, changed
    tests that pass on the original code too; `unlike`, changed tests that failed neither as
    honest code nor as the original code does; `excused`, tests not changed by name whose
    first word stands (they fail on the original code in the copies' place too)."""

    forgiven: set[str] = field(default_factory=set)
    unlike: set[str] = field(default_factory=set)
    excused: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Graded:
    """The grading's outcomes and findings over both runs; `timed_out`: either run's."""

    outcomes: dict[str, Outcome]
    timed_out: bool
    findings: list[Finding]


def graded_with_copies(copy: Path, scratch: Path, copies: list[Copy],
                       changed: Mapping[str, bytes], run: Callable[[list[Copy]], Run],
                       judge: Callable[[Run, Run], Judged]) -> Graded:
    """The grading run of the restored `copy`, then, with `copies` drawn, the copies' run,
    made to look like the first from inside: a second clean copy (taken now, as restored,
    before anything is planted in either) with the `changed` test files written in it, moved
    to the first's very path once the first has ended, run the same way (`run`, given the
    copies it holds: none the first time; its scratch at the same paths). A stub that told
    the runs apart (its working directory, a variable, fewer files in its argv) answered the
    grading run only and scored 1.0 (the review of JavaScript's copies). Then `judge` (the
    first run, the second) says what the second run's failures and passes mean, and a test
    passes where it passed in both runs (the changed ones: in the first), so a stub that
    cheats in one run of two at random gains nothing. A second run that timed out is
    undecided: reported as the timeout it is."""
    second = scratch / "second"
    if copies:
        copy_tree(copy, second)
        write_changed(second, changed)
    first = run([])
    outcomes, timed_out, findings = dict(first.outcomes), first.timed_out, [*first.findings]
    if copies and not timed_out:
        copy.rename(scratch / "first")  # its tests have ended: the second takes its path
        second.rename(copy)
        again = run(copies)
        timed_out = again.timed_out
        findings += again.findings
        judged = Judged()
        if not timed_out:
            judged = judge(first, again)
            findings += copy_findings(copies, again.outcomes, judged.forgiven, first.outcomes)
            findings += unlike_findings(copies, judged.unlike)
        outcomes = in_both_runs(outcomes, again.outcomes, copies, judged.excused)
    return Graded(outcomes, timed_out, findings)


DECIMAL = re.compile(r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")  # no `_`, octal, hex, exponent, `1.`
# Punctuation a literal may hold as itself in every quoting: not quotes, a backslash, `$`,
# `{` or `}` (a JavaScript template's `${`).
_PUNCTUATION = "".join(c for c in string.punctuation if c not in "'\"`\\${}")


def changed_characters(body: str, rng: random.Random) -> str:
    """`body` (a string literal's text between its quotes, no escape in it) with another
    value that looks like one: an ASCII letter or digit replaced by another of its kind
    (`"SGP"` -> `"SGQ"`), where it has none a punctuation mark (`"!"` -> `"?"`); six letters
    added where it has neither (`""`). Six letters
    added to every value (`"BRAwkfmes"`, sessions 65 to 67) were a tell a stub could test
    without knowing any answer (a tail of lowercase letters after a value that had none)."""
    kinds = (string.ascii_lowercase, string.ascii_uppercase, string.digits, _PUNCTUATION)
    places = [i for i, c in enumerate(body) if any(c in k for k in kinds[:3])] \
        or [i for i, c in enumerate(body) if c in _PUNCTUATION]
    if not places:
        return body + "".join(rng.choice(string.ascii_lowercase) for _ in range(6))
    at = rng.choice(places)
    kind = next(k for k in kinds if body[at] in k)
    return body[:at] + rng.choice(kind.replace(body[at], "")) + body[at + 1:]


def changed_digits(number: str, rng: random.Random) -> str:
    """A decimal number's text (`42`, `1.25`) with one of its first 15 digits replaced by
    another (a double holds 15 exactly), never a leading zero: another value that looks
    like one (`42` -> `47`)."""
    places = [i for i, c in enumerate(number) if c.isdigit()][:15]
    at = rng.choice(places)
    leading = at == 0 and len(number.split(".")[0]) > 1
    digits = string.digits.replace(number[at], "").replace("0", "" if leading else "0")
    return number[:at] + rng.choice(digits) + number[at + 1:]
