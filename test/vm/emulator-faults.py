#!/usr/bin/env python3
"""Prints the tests of a ctest JUnit report to run once more because a VM
died of an emulator fault, not of anything tested: one name a line.

Under TCG a guest kernel can hit an int3 it planted while patching its own
text (static keys; QEMU's cross-modifying code between vCPUs), and oopses
with "Oops: int3" (seen on Linux 6.12 in a boot and in container_vm). The
harness prints the console of a VM that died (test/vm/vm-exec), so the
test's output holds the oops. Printed: the failed tests whose output holds
it and, when there is one, the tests that did not run (their fixture died).
Exits 1 when a test failed otherwise: a rerun must not hide that failure.
Usage: emulator-faults.py REPORT.xml
"""
import sys
import xml.etree.ElementTree as ET

SIGNATURE = "Oops: int3"


def main(report):
    try:
        suite = ET.parse(report).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"emulator-faults: {report}: {e}", file=sys.stderr)
        return 1
    faulted, not_run, failed = [], [], []
    for case in suite.iter("testcase"):
        name = case.get("name")
        if case.get("status") == "notrun":
            not_run.append(name)
        elif case.find("failure") is not None:
            output = "".join(e.text or "" for e in case.iter("system-out"))
            (faulted if SIGNATURE in output else failed).append(name)
    if faulted:
        print("\n".join(faulted + not_run))
    return 1 if failed else 0

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
