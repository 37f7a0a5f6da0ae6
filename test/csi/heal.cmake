# Healing after a daemon restart (csi/volume_healer.h): the evidence reads on
# a fake /proc and sysfs, the VM test with the real daemon, kernel nbd and
# Ceph, and the host start -> ready benchmark.
nbdk_add_test(heal_evidence_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/heal_evidence_test.cc LIBS nbdk_node_service)
# The real daemon healing StaleBoot and Expired records on the host (no nbd).
nbdk_add_test(heal_daemon_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/heal_daemon_test.cc
  LIBS nbdk_csi_proto nbdk_node_journal nbdk_test_common)
target_compile_definitions(heal_daemon_test PRIVATE NBDKEEPERD_PATH="$<TARGET_FILE:nbdkeeperd>")
add_dependencies(heal_daemon_test nbdkeeperd)

add_executable(heal_vm_test ${CMAKE_CURRENT_LIST_DIR}/heal_vm_test.cc ${CMAKE_CURRENT_LIST_DIR}/node_vm_fixture.cc)
target_include_directories(heal_vm_test PRIVATE ${RAPIDJSON_INCLUDE})
target_link_libraries(heal_vm_test PRIVATE
  nbdk_csi_proto nbdk_csi_node nbdk_node_ops nbdk_ceph nbdk_test_common GTest::gtest GTest::gtest_main)
target_compile_definitions(heal_vm_test PRIVATE NBDKEEPERD_PATH="$<TARGET_FILE:nbdkeeperd>")
add_dependencies(heal_vm_test nbdkeeperd)
nbdk_add_vm_test(NAME heal_vm COMMAND $<TARGET_FILE:heal_vm_test> TIMEOUT 600)

# Benchmark, not a test: `build/test/csi/heal_bench`.
add_executable(heal_bench ${CMAKE_SOURCE_DIR}/test/bench/heal_bench.cc)
target_link_libraries(heal_bench PRIVATE nbdk_node_journal nbdk_test_common)
target_compile_definitions(heal_bench PRIVATE NBDKEEPERD_PATH="$<TARGET_FILE:nbdkeeperd>")
add_dependencies(heal_bench nbdkeeperd)

# Hostile and malformed requests against the real daemon (no nbd, no Ceph).
nbdk_add_test(hostile_requests_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/hostile_requests_test.cc
  LIBS nbdk_csi_proto nbdk_node_journal nbdk_test_common)
target_compile_definitions(hostile_requests_test PRIVATE NBDKEEPERD_PATH="$<TARGET_FILE:nbdkeeperd>")
add_dependencies(hostile_requests_test nbdkeeperd)
