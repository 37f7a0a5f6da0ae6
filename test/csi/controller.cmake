# csi_controller_test: the pure parts of the CSI Controller service.
nbdk_add_test(csi_controller_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/controller_request_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/op_locks_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/snapshot_request_test.cc
  LIBS nbdk_csi_controller_request)

# CreateVolume's rule of ownership on the in-memory omap store.
nbdk_add_test(volume_claim_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/volume_claim_test.cc
  LIBS nbdk_controller_service)

# Controller calls waiting on a dead cluster while a Node call is answered,
# against the real daemon on the host (no nbd, no Ceph).
nbdk_add_test(controller_isolation_test SOURCES controller_isolation_test.cc
  LIBS nbdk_csi_proto nbdk_node_journal nbdk_test_common)
target_compile_definitions(controller_isolation_test PRIVATE NBDKEEPERD_PATH="$<TARGET_FILE:nbdkeeperd>")
add_dependencies(controller_isolation_test nbdkeeperd)

# The Controller service on the real kernel and Ceph, through nbdkeeperd and
# a gRPC client (create, stage, expand, delete, omap keys): runs in the VM.
nbdk_add_node_vm_test(NAME controller_vm SOURCES controller_vm_test.cc TIMEOUT 180)

# Snapshots and clones on the real kernel and Ceph, through nbdkeeperd and a
# gRPC client: their data (restore, clone, delete orders) and their contract
# (codes, listing, ceph-csi's layout). One executable, so one daemon: runs in
# the VM.
nbdk_add_node_vm_test(NAME snapshot_vm SOURCES snapshot_data_vm_test.cc snapshot_contract_vm_test.cc TIMEOUT 600)

# The real CSI sanity suite, csi-test's csi-sanity binary, through
# nbdkeeperd: runs in the VM (which sees the host's / at the same paths).
get_filename_component(nbdk_default_csi_sanity ${CMAKE_SOURCE_DIR}/../shared/bin/csi-sanity ABSOLUTE)
set(NBDK_CSI_SANITY ${nbdk_default_csi_sanity} CACHE FILEPATH "csi-test v5.4.0's csi-sanity binary")
nbdk_add_node_vm_test(NAME csi_sanity_vm SOURCES csi_sanity_vm_test.cc TIMEOUT 1680
  PLATFORMS ${NBDK_VM_PLATFORMS})
target_compile_definitions(csi_sanity_vm_test PRIVATE NBDK_CSI_SANITY="${NBDK_CSI_SANITY}")

# Source, snapshot and clone of a volume deleted in all six orders: runs in
# the VM.
nbdk_add_node_vm_test(NAME clone_delete_order_vm SOURCES clone_delete_order_vm_test.cc sanity_style_fixture.cc
  TIMEOUT 600)

# A crash between any two RBD steps of CreateSnapshot and of CreateVolume
# from a snapshot or a volume, retried and deleted through the Controller's
# BLOCKING functions against the VM's real Ceph (no nbdkeeperd): runs in the
# VM.
add_executable(rbd_step_crash_vm_test rbd_step_crash_vm_test.cc)
target_link_libraries(rbd_step_crash_vm_test PRIVATE nbdk_controller_service GTest::gtest GTest::gtest_main)
nbdk_add_vm_test(NAME rbd_step_crash_vm COMMAND $<TARGET_FILE:rbd_step_crash_vm_test> TIMEOUT 600)
