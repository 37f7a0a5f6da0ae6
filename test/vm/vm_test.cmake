# Real-kernel VM tests: registration helper, usable from any test directory.
# include() this file before the test directories that call it (test/vm is
# added last, so a function defined in test/vm/CMakeLists.txt would come too
# late for them).
#
#   nbdk_add_vm_test(NAME <name> COMMAND <argv>... [TIMEOUT <seconds>]
#                    [ENV <NAME=VALUE>...] [SYSTEMD | CONTAINER] [HOST])
#
# Runs <argv> inside the shared test VM through test/vm/vm-exec, in the
# calling directory's build directory (the host's / is the VM's /, so
# $<TARGET_FILE:...> of a host-built binary works). The command gets the
# Ceph test environment (see test/vm/README.md). All VM tests share one VM
# and one Ceph cluster (fixture "vm", booted by vm_start, powered off by
# vm_stop) and run one at a time (RESOURCE_LOCK vm). They carry LABELS vm:
# `ctest -L vm` runs only them, `ctest -LE vm` everything else.
#
# SYSTEMD: the test runs in the other VM, with systemd as PID 1 and a root
# disk kept across boots (fixture "vm_systemd", booted by vm_systemd_start
# once the plain VM is off). CONTAINER: in a systemd VM of its own (fixture
# "vm_container", booted once the systemd VM is off and the images exist:
# test/container). HOST: <argv> runs on the host, with
# NBDK_VM_STATE naming the VM (for scripts that power-cut and boot it).
#
# A device the command leaves configured is reported in its output and
# unmapped before the next test. TIMEOUT (default 300) bounds the command inside the VM; CTest's own
# timeout is 60 s longer so that vm-exec reports a timeout (and the console
# tail) before CTest kills it.
include_guard(GLOBAL)

set(NBDK_VM_DIR ${CMAKE_CURRENT_LIST_DIR} CACHE INTERNAL "test/vm scripts")
# The running VM's pid file, console log and job share (one per build tree).
set(NBDK_VM_STATE ${CMAKE_BINARY_DIR}/vm-state CACHE INTERNAL "test VM state")
set(NBDK_VM_SYSTEMD_STATE ${CMAKE_BINARY_DIR}/vm-state-systemd CACHE INTERNAL "systemd test VM state")
set(NBDK_VM_CONTAINER_STATE ${CMAKE_BINARY_DIR}/vm-state-container CACHE INTERNAL "container test VM state")

function(nbdk_add_vm_test)
  cmake_parse_arguments(VT "SYSTEMD;CONTAINER;HOST" "NAME;TIMEOUT" "COMMAND;ENV" ${ARGN})
  if(NOT VT_NAME OR NOT VT_COMMAND)
    message(FATAL_ERROR "nbdk_add_vm_test: NAME and COMMAND are required")
  endif()
  if(NOT VT_TIMEOUT)
    set(VT_TIMEOUT 300)
  endif()
  set(env_args)
  foreach(e IN LISTS VT_ENV)
    list(APPEND env_args --env ${e})
  endforeach()
  math(EXPR ctest_timeout "${VT_TIMEOUT} + 60")
  if(VT_HOST)
    add_test(NAME ${VT_NAME} COMMAND ${VT_COMMAND})
  else()
    add_test(NAME ${VT_NAME}
      COMMAND ${NBDK_VM_DIR}/vm-exec --timeout ${VT_TIMEOUT} ${env_args} -- ${VT_COMMAND})
  endif()
  if(VT_SYSTEMD)
    set(fixture vm_systemd)
    set(state ${NBDK_VM_SYSTEMD_STATE})
  elseif(VT_CONTAINER)
    set(fixture vm_container)
    set(state ${NBDK_VM_CONTAINER_STATE})
  else()
    set(fixture vm)
    set(state ${NBDK_VM_STATE})
  endif()
  set_tests_properties(${VT_NAME} PROPERTIES
    FIXTURES_REQUIRED ${fixture}
    RESOURCE_LOCK vm
    LABELS vm
    TIMEOUT ${ctest_timeout}
    ENVIRONMENT "NBDK_VM_STATE=${state};NBDK_VM_DIR=${NBDK_VM_DIR}")
  if(NOT VT_NAME STREQUAL "vm_kernel" AND NOT VT_SYSTEMD AND NOT VT_CONTAINER)
    # Ordering only: the harness's own check runs first, in a fresh VM.
    set_tests_properties(${VT_NAME} PROPERTIES DEPENDS vm_kernel)
  endif()
endfunction()
