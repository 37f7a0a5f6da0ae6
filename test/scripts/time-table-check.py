#!/usr/bin/env python3
"""scripts/time-table.py on a made-up run (CTest time_table): each test's
time is in the table, and a failed test's telling lines come last, after
the table, where CI's kept tail shows them."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "time-table.py"
CRASH = "nbdkeeperd: fatal signal 11 (SEGV); backtrace of the thread it hit:"
# What a dead daemon leaves in its test's log: every later call fails.
LATER = "\n".join(f"storage_class_vm_fixture.h:{200 + i}: Failure" for i in range(8))


def case(name, seconds, output="", failure=False):
    inner = '<failure message="Failed"/>' if failure else ""
    return f'<testcase name="{name}" time="{seconds}" status="run">{inner}<system-out>{output}</system-out></testcase>'


def check(what, ok):
    if not ok:
        sys.exit(f"time-table: FAIL: {what}")
    print(f"time-table: ok: {what}")


with tempfile.TemporaryDirectory() as d:
    times = pathlib.Path(d)
    noise = "\n".join(f"line {i} of a long log" for i in range(500))
    (times / "cluster.xml").write_text(
        '<testsuite name="t">' +
        case("controller_cluster", 5.2, f"{noise}\nstorage_class_vm_fixture.h:103: Failure\n{noise}\n{CRASH}\n#0 0x1\n{LATER}\nlast line",
             True) +
        case("snapshot_cluster", 36.1) + "</testsuite>")
    (times / "phases.tsv").write_text("cluster\t100.0\t400.0\t1\n")
    p = subprocess.run([sys.executable, SCRIPT, d], capture_output=True, text=True, check=True)
    out = p.stdout.splitlines()
    check("the table has each test's time and status",
          any("36.1 s" in l and "snapshot_cluster  [passed]" in l for l in out) and
          any("controller_cluster  [FAILED]" in l for l in out))
    end = out.index("=== end of time table ===")
    tail = out[end + 1:]
    check("the failed test is named after the table", tail[:2] == ["=== 1 failed, each with its telling lines ===",
                                                                  "cluster controller_cluster:"])
    check("its telling lines: the crash before the failures it caused, the last lines, not the noise",
          tail[2:] == ["  | storage_class_vm_fixture.h:103: Failure", f"  | {CRASH}"] +
          [f"  | storage_class_vm_fixture.h:{200 + i}: Failure" for i in range(4)] +
          ["  | storage_class_vm_fixture.h:206: Failure", "  | storage_class_vm_fixture.h:207: Failure",
           "  | last line"])
    (times / "cluster.xml").write_text('<testsuite name="t">' + case("snapshot_cluster", 36.1) + "</testsuite>")
    p = subprocess.run([sys.executable, SCRIPT, d], capture_output=True, text=True, check=True)
    check("a run with no failure ends with the table", p.stdout.splitlines()[-1] == "=== end of time table ===")
