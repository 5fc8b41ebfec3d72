"""The integrity channel: what the observer in the test process (taskforge_integrity.py) saw.

The grader writes a fresh key into the audit directory; the observer reads and deletes it
before any project code runs, and signs every line it writes (a sequence number and a MAC).
The grader trusts the channel only whole: a line it cannot authenticate, a gap, or no final
line (the observer never finished) makes the reward 0 (fail closed). What the channel
reports:
- the runner's problems: pytest, pluggy, unittest, builtins, trace functions, exception
  hooks, import hooks or hook implementations changed after the snapshot;
- per test, whether any phase raised, read before a report existed: a test the JUnit XML
  calls passed must have run and raised nothing;
- per test that failed with an AssertionError, the sides of the comparison that failed it
  (each a pair: the repr of its plain str, bytes, int or float value, and its own repr),
  which the expectation copies read (`expectations.fails_as_honest_code_does`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from taskforge.model import Finding, Outcome

KEY_FILE = "key"
CHANNEL_FILE = "integrity.jsonl"


def sign(key: bytes, body: bytes) -> bytes:
    """The MAC of one line, as the observer computes it (keyed BLAKE2b)."""
    return hashlib.blake2b(body, key=key, digest_size=32).hexdigest().encode()


def new_key(directory: Path) -> bytes:
    """A per-grading key, written where only the observer reads it (and deletes it)."""
    key = secrets.token_bytes(32)
    (directory / KEY_FILE).write_bytes(key)
    return key


@dataclass
class Channel:
    problems: list[str] = field(default_factory=list)
    raised: dict[str, str | None] = field(default_factory=dict)  # node id -> what raised
    # node id -> the sides of the comparison that failed it, where one did
    compared: dict[str, list] = field(default_factory=dict)
    finished: bool = False
    broken: str | None = None  # why the channel cannot be trusted


def read_channel(directory: Path, key: bytes) -> Channel:
    channel = Channel()
    path = directory / CHANNEL_FILE
    if not path.is_file():
        channel.broken = "the integrity channel is missing (the observer never started)"
        return channel
    for number, line in enumerate(path.read_bytes().split(b"\n")[:-1]):
        body, _, mac = line.rpartition(b"\t")
        expected = sign(key, body)
        try:
            entry = json.loads(body) if hmac.compare_digest(mac, expected) else None
        except ValueError:
            entry = None
        if not isinstance(entry, dict) or entry.get("seq") != number or channel.finished:
            channel.broken = f"the integrity channel was forged or garbled (line {number + 1})"
            return channel
        kind = entry.get("kind")
        if kind == "problem":
            channel.problems.append(str(entry["message"]))
        elif kind == "test":
            channel.raised[str(entry["nodeid"])] = entry["raised"]
            if isinstance(entry.get("compared"), list):
                channel.compared[str(entry["nodeid"])] = entry["compared"]
        elif kind == "end":
            channel.finished = True
    if not channel.finished:
        channel.broken = "the integrity channel was cut short (the observer never finished)"
    return channel


def channel_findings(channel: Channel, outcomes: dict[str, Outcome],
                     selected: list[str]) -> list[Finding]:
    """The channel's problems, and every selected test the JUnit XML calls passed that the
    observer saw raise or never saw."""
    if channel.broken:
        return [Finding(channel.broken, True)]
    findings = [Finding(f"the test runner was tampered with: {p}", True) for p in channel.problems]
    for test_id in selected:
        if outcomes.get(test_id) != "passed":
            continue
        if test_id not in channel.raised:
            findings.append(Finding(f"the JUnit XML reports {test_id} passed, but the runner "
                                    f"never ran it", True))
        elif channel.raised[test_id]:
            findings.append(Finding(f"the JUnit XML reports {test_id} passed, but it raised "
                                    f"({channel.raised[test_id]})", True))
    return findings
