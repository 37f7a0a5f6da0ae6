# Real-kernel VM tests: registration helper, usable from any test directory.
# include() this file before the test directories that call it (test/vm is
# added last, so a function defined in test/vm/CMakeLists.txt would come too
# late for them).
#
#   nbdk_add_vm_test(NAME <name> COMMAND <argv>... [TIMEOUT <seconds>]
#                    [ENV <NAME=VALUE>...] [SYSTEMD | CONTAINER] [HOST]
#                    [ACROSS_PLATFORMS [PLATFORM_COMMAND <argv>...]])
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
# ACROSS_PLATFORMS: the test covers what differs between platforms
# (test/vm/lib.sh's vm_platform: another kernel, another userland), labelled
# `platform`. In the default tree (debian12) it runs again on each of
# NBDK_VM_PLATFORMS as <name>_<platform>, in that platform's own VM (fixture
# vm_<platform>, vm_systemd_<platform> or vm_container_<platform>, each
# booted once for all its tests). In a platform's own tree
# (scripts/platform-build.sh) the target `platform_tests` builds what these
# tests run, so `ctest -L platform` there needs no full build.
# PLATFORM_COMMAND: what the other platforms run instead of COMMAND.
# NOT_DEFAULT_PLATFORM: with ACROSS_PLATFORMS, the default platform skips
# it: what one platform covers (the CSI contract, the shipped image, whose
# userland is Debian 13's) runs on the newest, in CI's Debian 13 tree.
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
# The native test cluster's pid, env and logs (test/vm/cluster).
set(NBDK_CLUSTER_STATE ${CMAKE_BINARY_DIR}/cluster-state CACHE INTERNAL "native test cluster state")
# The native cluster the plain VMs reach over a tap (fixture vm_cluster).
set(NBDK_VM_CLUSTER_STATE ${CMAKE_BINARY_DIR}/vm-cluster-state CACHE INTERNAL "the plain VMs' native cluster")
# The platforms whose kernel but not userland differs (debian12-k612), run
# from the default tree: empty in CI, which runs Linux 6.12 as Debian 13's
# (scripts/test.sh); `-DNBDK_VM_PLATFORMS=debian12-k612` for the full matrix.
set(NBDK_VM_PLATFORMS "" CACHE STRING "VM test platforms besides debian12 in this tree (test/vm/lib.sh)")
# The platform this build tree's own VM tests boot: empty for debian12;
# scripts/platform-build.sh sets it for a tree built in a platform's root.
set(NBDK_VM_PLATFORM "" CACHE STRING "the platform of this build tree's VM tests (empty: debian12)")
# The userland this tree's daemon links, so its container image's platform
# (scripts/image.sh --platform).
if(NBDK_VM_PLATFORM)
  set(NBDK_IMAGE_PLATFORM ${NBDK_VM_PLATFORM})
else()
  set(NBDK_IMAGE_PLATFORM debian12)
endif()

function(nbdk_add_vm_test)
  cmake_parse_arguments(VT "SYSTEMD;CONTAINER;HOST;ACROSS_PLATFORMS;NOT_DEFAULT_PLATFORM" "NAME;TIMEOUT"
    "COMMAND;PLATFORM_COMMAND;ENV" ${ARGN})
  if(NOT VT_NAME OR NOT VT_COMMAND)
    message(FATAL_ERROR "nbdk_add_vm_test: NAME and COMMAND are required")
  endif()
  if(NOT VT_TIMEOUT)
    set(VT_TIMEOUT 300)
  endif()
  set(flags)
  foreach(flag SYSTEMD CONTAINER HOST)
    if(VT_${flag})
      list(APPEND flags ${flag})
    endif()
  endforeach()
  set(platform_command ${VT_COMMAND})
  if(VT_PLATFORM_COMMAND)
    set(platform_command ${VT_PLATFORM_COMMAND})
  endif()
  if(NOT VT_ACROSS_PLATFORMS)
    nbdk_add_vm_platform_test(NAME ${VT_NAME} TIMEOUT ${VT_TIMEOUT} ${flags} ENV ${VT_ENV} COMMAND ${VT_COMMAND})
  elseif(NBDK_VM_PLATFORM)
    nbdk_add_vm_platform_test(NAME ${VT_NAME} TIMEOUT ${VT_TIMEOUT} ${flags} ENV ${VT_ENV}
      COMMAND ${platform_command})
    set_property(TEST ${VT_NAME} APPEND PROPERTY LABELS platform)
    # The targets the command runs, for `platform_tests`.
    string(REGEX MATCHALL "\\$<TARGET_FILE:[^>]+>" files "${platform_command}")
    foreach(file IN LISTS files)
      string(REGEX REPLACE "^\\$<TARGET_FILE:([^>]+)>$" "\\1" target "${file}")
      set_property(GLOBAL APPEND PROPERTY NBDK_PLATFORM_TEST_TARGETS ${target})
    endforeach()
  else()
    foreach(platform IN LISTS NBDK_VM_PLATFORMS)
      nbdk_add_vm_platform_test(NAME ${VT_NAME}_${platform} PLATFORM ${platform} TIMEOUT ${VT_TIMEOUT} ${flags}
        ENV ${VT_ENV} COMMAND ${platform_command})
    endforeach()
    if(NOT VT_NOT_DEFAULT_PLATFORM)
      nbdk_add_vm_platform_test(NAME ${VT_NAME} TIMEOUT ${VT_TIMEOUT} ${flags} ENV ${VT_ENV} COMMAND ${VT_COMMAND})
    endif()
  endif()
endfunction()

# One registration of a VM test, on PLATFORM (empty: the default one).
function(nbdk_add_vm_platform_test)
  cmake_parse_arguments(VT "SYSTEMD;CONTAINER;HOST" "NAME;TIMEOUT;PLATFORM" "COMMAND;ENV" ${ARGN})
  set(platform ${VT_PLATFORM})
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
  set(labels vm)
  set(platform_env)
  if(NBDK_VM_PLATFORM)
    set(platform_env ";NBDK_VM_PLATFORM=${NBDK_VM_PLATFORM}")
  endif()
  if(platform)
    set(fixture ${fixture}_${platform})
    set(state ${state}-${platform})
    set(labels vm platform)
    set(platform_env ";NBDK_VM_PLATFORM=${platform}")
  endif()
  # test/vm boots only the fixtures some test requires.
  set_property(GLOBAL APPEND PROPERTY NBDK_VM_FIXTURES_USED ${fixture})
  set_tests_properties(${VT_NAME} PROPERTIES
    # Every VM's Ceph is the native cluster's: it must outlive the test (a
    # HOST command boots the VM again or adds to the cluster:
    # test/systemd/cold-boot.sh, test/vm/with-crush-hosts.sh).
    FIXTURES_REQUIRED "${fixture};vm_cluster"
    RESOURCE_LOCK vm
    LABELS "${labels}"
    TIMEOUT ${ctest_timeout}
    ENVIRONMENT "NBDK_VM_STATE=${state};NBDK_VM_DIR=${NBDK_VM_DIR};NBDK_VM_CLUSTER_STATE=${NBDK_VM_CLUSTER_STATE}${platform_env}")
  if(NOT VT_NAME MATCHES "^vm_kernel" AND NOT VT_SYSTEMD AND NOT VT_CONTAINER)
    # Ordering only: the harness's own check runs first, in a fresh VM.
    if(platform)
      set_tests_properties(${VT_NAME} PROPERTIES DEPENDS vm_kernel_${platform})
    else()
      set_tests_properties(${VT_NAME} PROPERTIES DEPENDS vm_kernel)
    endif()
  endif()
endfunction()

# nbdk_add_cluster_test(NAME <name> COMMAND <argv>... [TIMEOUT <seconds>]
#                       [ENV <NAME=VALUE>...])
#
# Runs <argv> on the host inside the native test cluster's namespaces
# (test/vm/cluster: the same Ceph and environment as the VM's, three OSDs,
# no guest kernel): for what touches Ceph and the daemon but no nbd device,
# mount or dm-crypt, at native speed. Fixture "cluster" (cluster_start,
# cluster_stop), RESOURCE_LOCK cluster (the tests share one cluster, so
# listings see no other test's volumes), LABELS cluster.
function(nbdk_add_cluster_test)
  cmake_parse_arguments(CT "" "NAME;TIMEOUT" "COMMAND;ENV" ${ARGN})
  if(NOT CT_NAME OR NOT CT_COMMAND)
    message(FATAL_ERROR "nbdk_add_cluster_test: NAME and COMMAND are required")
  endif()
  if(NOT CT_TIMEOUT)
    set(CT_TIMEOUT 300)
  endif()
  add_test(NAME ${CT_NAME} COMMAND ${NBDK_VM_DIR}/cluster exec -- ${CT_COMMAND})
  set_tests_properties(${CT_NAME} PROPERTIES
    FIXTURES_REQUIRED cluster
    RESOURCE_LOCK cluster
    LABELS cluster
    TIMEOUT ${CT_TIMEOUT}
    ENVIRONMENT "NBDK_CLUSTER_STATE=${NBDK_CLUSTER_STATE};${CT_ENV}")
  set_property(GLOBAL PROPERTY NBDK_CLUSTER_USED TRUE)
endfunction()
