# nbdk_rbd_lock_breaker: RbdLockBreaker (supervisor/rbd_lock_breaker.h), and
# apart from it, without librados, the Ceph address rule it rests on
# (supervisor/ceph_address.h, nbdk_ceph_address).
add_library(nbdk_ceph_address STATIC ceph_address.cc)
target_link_libraries(nbdk_ceph_address PUBLIC nbdk_core)
add_library(nbdk_rbd_lock_breaker STATIC rbd_lock_breaker.cc)
target_link_libraries(nbdk_rbd_lock_breaker PUBLIC nbdk_ceph_address nbdk_ceph)
