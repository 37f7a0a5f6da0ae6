#!/usr/bin/env python3
"""Prints where a test run's minutes went (scripts/test.sh calls it last).

Reads the run's times directory:
  phases.tsv   NAME <tab> START <tab> END <tab> STATUS, one line a phase
               (epoch seconds; a background phase's END is when it ended,
               not when the run waited for it)
  *.xml        ctest's JUnit reports (--output-junit), one a ctest run,
               named for its phase
  boots.tsv    STATE <tab> SECONDS <tab> CEPH_MS, one line a VM boot
               (test/vm/vm-start: boot to ready, and Ceph's share of it)
               or a native cluster's start (test/vm/cluster)
Ends with each failed test's telling lines (CI keeps a log's head and
tail, so what failed is said last).
Usage: time-table.py TIMES_DIR [--all]
  --all  every test; by default the tests under 1 s are summed in one line.
"""
import pathlib
import re
import sys
import xml.etree.ElementTree as ET


def minutes(seconds):
    return f"{seconds / 60:6.1f} min"


def read_tsv(path, columns):
    """The lines of a tab-separated file that have `columns` fields."""
    if not path.exists():
        return []
    rows = (line.split("\t") for line in path.read_text().splitlines())
    return [fields for fields in rows if len(fields) == columns]


def read_phases(times):
    return [(name, float(start), float(end), status)
            for name, start, end, status in read_tsv(times / "phases.tsv", 4)]


# Lines that say why a test failed: a crash's or a timeout's first (one
# may come after many failures it caused), then gtest's and the shell
# harnesses'.
CRASH = re.compile(r"fatal signal|terminate called|[Aa]bort|Killed|Segmentation|Timeout|TIMEDOUT")
FAILURE = re.compile(r"Failure$|FAIL|ERROR|[Ee]rror:|signal")
TELLING_LINES, LAST_LINES = 6, 3


def digest(output):
    """A failed test's telling lines, crashes first, in the log's order,
    and its last ones."""
    lines = [line.rstrip()[:200] for line in output.splitlines() if line.strip()]
    crashes = [i for i, line in enumerate(lines) if CRASH.search(line)]
    failures = [i for i, line in enumerate(lines) if FAILURE.search(line) and not CRASH.search(line)]
    picked = sorted((crashes + failures)[:TELLING_LINES])
    last = range(max(0, len(lines) - LAST_LINES), len(lines))
    return [lines[i] for i in sorted(set(picked) | set(last))]


def read_tests(times, failures=None):
    """(seconds, phase, test, status) of every test in every JUnit report;
    with `failures`, appends (phase, test, digest) of each failed one."""
    rows = []
    for report in sorted(times.glob("*.xml")):
        try:
            suite = ET.parse(report).getroot()
        except ET.ParseError as e:
            print(f"time-table: {report.name}: not JUnit XML ({e})", file=sys.stderr)
            continue
        for case in suite.iter("testcase"):
            status = case.get("status", "run")
            if case.find("failure") is not None:
                status = "FAILED"
                if failures is not None:
                    failures.append((report.stem, case.get("name", "?"), digest(case.findtext("system-out") or "")))
            elif status == "run":
                status = "passed"
            rows.append((float(case.get("time", "0")), report.stem, case.get("name", "?"), status))
    return rows


def read_boots(times):
    return [(state, float(seconds), float(ceph_ms) / 1000)
            for state, seconds, ceph_ms in read_tsv(times / "boots.tsv", 3)]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    times = pathlib.Path(sys.argv[1])
    every = "--all" in sys.argv[2:]
    phases = read_phases(times)
    failures = []
    tests = read_tests(times, failures)
    boots = read_boots(times)

    print("=== time table ===")
    if phases:
        t0 = min(p[1] for p in phases)
        t1 = max(p[2] for p in phases)
        print(f"run: {minutes(t1 - t0)} ({t1 - t0:.0f} s), phases by length "
              "(start and end in seconds from the run's start):")
        for name, start, end, status in sorted(phases, key=lambda p: p[1] - p[2]):
            print(f"  {minutes(end - start)}  {start - t0:6.0f} -> {end - t0:6.0f}  {name}  [{status}]")
    if boots:
        total = sum(b[1] for b in boots)
        ceph = sum(b[2] for b in boots)
        print(f"VM boots and native clusters: {len(boots)}, {minutes(total)} to ready, of which Ceph bring-up {minutes(ceph)}:")
        for state, seconds, ceph_s in boots:
            print(f"  {seconds:7.1f} s  (Ceph {ceph_s:5.1f} s)  {state}")
    if tests:
        tests.sort(reverse=True)
        print(f"tests by wall time ({len(tests)}, {minutes(sum(t[0] for t in tests))} summed;"
              " host tests ran several at once):")
        small = [t for t in tests if t[0] < 1.0 and not every]
        for seconds, phase, name, status in tests:
            if small and seconds < 1.0:
                break
            print(f"  {seconds:8.1f} s  {phase:<16} {name}  [{status}]")
        if small:
            print(f"  {sum(t[0] for t in small):8.1f} s  {len(small)} tests under 1 s each")
    print("=== end of time table ===")
    if failures:
        print(f"=== {len(failures)} failed, each with its telling lines ===")
        for phase, name, lines in failures:
            print(f"{phase} {name}:")
            for line in lines:
                print(f"  | {line}")


if __name__ == "__main__":
    main()
