nbdk_add_test(node_ops_test SOURCES confined_path_test.cc node_ops_test.cc LIBS nbdk_node_ops)

# The Node service on the real kernel and Ceph: runs in the test VM.
add_executable(node_vm_test node_vm_test.cc node_safety_vm_test.cc node_vm_fixture.cc)
target_include_directories(node_vm_test PRIVATE ${RAPIDJSON_INCLUDE})
target_link_libraries(node_vm_test PRIVATE
  nbdk_csi_proto nbdk_csi_node nbdk_node_ops nbdk_ceph nbdk_test_common GTest::gtest GTest::gtest_main)
target_compile_definitions(node_vm_test PRIVATE NBDKEEPERD_PATH="$<TARGET_FILE:nbdkeeperd>")
add_dependencies(node_vm_test nbdkeeperd)
nbdk_add_vm_test(NAME node_vm COMMAND $<TARGET_FILE:node_vm_test> TIMEOUT 900)
