# nbdk_rbd_lock_breaker: RbdLockBreaker (supervisor/rbd_lock_breaker.h), and
# apart from it, without librados, the Ceph address rule it rests on
# (supervisor/ceph_address.h, nbdk_ceph_address).
# Included from journal/CMakeLists.txt for now; paths are relative to this
# file so it can be included from anywhere; the guard makes a second
# include (journal/ and supervisor/ both) harmless.
include_guard(GLOBAL)
add_library(nbdk_ceph_address STATIC ${CMAKE_CURRENT_LIST_DIR}/ceph_address.cc)
target_link_libraries(nbdk_ceph_address PUBLIC nbdk_core)
add_library(nbdk_rbd_lock_breaker STATIC ${CMAKE_CURRENT_LIST_DIR}/rbd_lock_breaker.cc)
target_link_libraries(nbdk_rbd_lock_breaker PUBLIC nbdk_ceph_address nbdk_rados)
