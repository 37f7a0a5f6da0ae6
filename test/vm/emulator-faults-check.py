#!/usr/bin/env python3
"""emulator-faults.py on made-up ctest reports (CTest emulator_faults):
what it reruns, and that a failure of another kind is never hidden."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).with_name("emulator-faults.py")
OOPS = "[  102.802341] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI"


def case(name, status, output="", failure=False):
    inner = '<failure message="Failed"/>' if failure else ""
    if status == "notrun":
        inner = '<skipped message="Fixture dependency failed"/>'
    return f'<testcase name="{name}" status="{status}">{inner}<system-out>{output}</system-out></testcase>'


def run(*cases):
    with tempfile.NamedTemporaryFile("w", suffix=".xml") as f:
        f.write('<testsuite name="t">' + "".join(cases) + "</testsuite>")
        f.flush()
        p = subprocess.run([sys.executable, SCRIPT, f.name], capture_output=True, text=True)
    return p.returncode, p.stdout.split()


def check(what, got, want):
    if got != want:
        sys.exit(f"emulator-faults: {what}: got {got}, want {want}")
    print(f"emulator-faults: ok: {what}")


check("a VM that died of the oops is rerun, with the tests its fixture left unrun",
      run(case("vm_start", "run"), case("container_vm", "fail", "died\n" + OOPS, True),
          case("scope_vm", "notrun")),
      (0, ["container_vm", "scope_vm"]))
check("a failure without the oops is no emulator fault",
      run(case("node_vm", "fail", "Expected equality", True)), (1, []))
check("beside a fault, another failure still fails the phase",
      run(case("node_vm", "fail", "Expected equality", True), case("heal_vm", "fail", OOPS, True)),
      (1, ["heal_vm"]))
check("tests that passed are not rerun, whatever they printed",
      run(case("vm_smoke", "run", OOPS)), (0, []))
