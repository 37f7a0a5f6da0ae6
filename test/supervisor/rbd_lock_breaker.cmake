# Tests for the RBD lock breaker (supervisor/rbd_lock_breaker.h): on the host
# without a cluster, and in the VM against a real one.
nbdk_add_test(rbd_lock_breaker_test SOURCES rbd_lock_breaker_test.cc LIBS nbdk_rbd_lock_breaker)

# Needs a real cluster and kernel nbd: runs in the VM.
add_executable(rados_vm_test rados_vm_test.cc)
target_link_libraries(rados_vm_test PRIVATE nbdk_rbd_lock_breaker GTest::gtest GTest::gtest_main)
# The lock break under a killed rbd-nbd needs the kernel (the VM); the omap
# and pool look-ups only Ceph (the native cluster).
nbdk_add_vm_test(NAME rados_vm COMMAND $<TARGET_FILE:rados_vm_test>
  --gtest_filter=-RadosVmTest.OmapGetAndPoolLookupsRoundTrip TIMEOUT 300)
nbdk_add_cluster_test(NAME rados_cluster COMMAND $<TARGET_FILE:rados_vm_test>
  --gtest_filter=RadosVmTest.OmapGetAndPoolLookupsRoundTrip TIMEOUT 120)
