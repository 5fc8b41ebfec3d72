"""The sys.monitoring tracer on its own, in a real 3.12+ interpreter: what a test map could
silently lose (equal code objects in two files, a line run by two tests, code outside the
root, a later tracer's tool id)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

from taskforge.languages.python.env.pythons import available_interpreters
from taskforge.languages.python.testing.runner import PLUGIN_DIR
from taskforge.languages.python.testing.testmap import tracer_for


def monitoring_python() -> str:
    """An interpreter with sys.monitoring (pyenv's on this machine kind): its absence is a
    failure, never a skip, since environments on 3.12+ depend on this tracer."""
    found = [path for version, path in available_interpreters()
             if tracer_for(version) == "sysmon"]
    assert found, "no Python 3.12+ interpreter on this machine"
    return found[0]


def trace(tmp_path: Path, program: str) -> dict:
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(PLUGIN_DIR)!r})
        from taskforge_tracer import Tracer
        ROOT = {str(tmp_path / "root")!r}
    """) + textwrap.dedent(program))
    (tmp_path / "root").mkdir(exist_ok=True)
    proc = subprocess.run([monitoring_python(), str(script)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp_path / "out.json").read_text())


def test_equal_functions_in_two_files_are_both_recorded(tmp_path: Path) -> None:
    # Code objects compare equal across files (same body, same line): keyed by identity.
    data = trace(tmp_path, """\
        a = compile("def f(x):\\n    return x\\n", ROOT + "/a.py", "exec")
        b = compile("def f(x):\\n    return x\\n", ROOT + "/b.py", "exec")
        assert a.co_consts[0] == b.co_consts[0]
        tracer = Tracer(ROOT)
        tracer.start()
        ga, gb = {}, {}
        exec(a, ga)
        exec(b, gb)
        tracer.switch("t")
        ga["f"](1)
        gb["f"](1)
        tracer.stop()
        tracer.save(ROOT + "/../out.json")
    """)
    root = str(tmp_path / "root")
    assert data[""] == {f"{root}/a.py": [1], f"{root}/b.py": [1]}
    assert data["t"] == {f"{root}/a.py": [2], f"{root}/b.py": [2]}


def test_each_test_records_the_lines_it_ran_even_after_another_did(tmp_path: Path) -> None:
    data = trace(tmp_path, """\
        code = compile("def f(x):\\n    if x:\\n        return 1\\n    return 2\\n",
                       ROOT + "/m.py", "exec")
        outside = compile("def g():\\n    return 3\\n", "/elsewhere/n.py", "exec")
        tracer = Tracer(ROOT)
        tracer.start()
        ns, other = {}, {}
        exec(code, ns)
        exec(outside, other)
        for name, arg in (("t1", 1), ("t2", 1), ("t3", 0)):
            tracer.switch(name)
            ns["f"](arg)
            other["g"]()
        tracer.stop()
        tracer.save(ROOT + "/../out.json")
    """)
    m = str(tmp_path / "root" / "m.py")
    assert data["t1"] == {m: [2, 3]}
    assert data["t2"] == {m: [2, 3]}  # the same lines again, for the next test
    assert data["t3"] == {m: [2, 4]}


def test_a_tool_id_in_use_is_left_alone(tmp_path: Path) -> None:
    # A suite that runs coverage.py's sys.monitoring core holds COVERAGE_ID; taskforge takes
    # another id, and gives its own back when it stops.
    data = trace(tmp_path, """\
        mon = sys.monitoring
        mon.use_tool_id(mon.COVERAGE_ID, "coverage.py")
        tracer = Tracer(ROOT)
        tracer.start()
        assert mon.get_tool(mon.COVERAGE_ID) == "coverage.py"
        tool = tracer.tool
        assert mon.get_tool(tool) == "taskforge"
        tracer.stop()
        assert mon.get_tool(tool) is None
        tracer.save(ROOT + "/../out.json")
    """)
    assert data == {}
