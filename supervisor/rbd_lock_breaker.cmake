# nbdk_rbd_lock_breaker: RbdLockBreaker (supervisor/rbd_lock_breaker.h), the
# supervision policy of breaking a dead rbd-nbd's lock, on the Ceph room
# (ceph/).
add_library(nbdk_rbd_lock_breaker STATIC rbd_lock_breaker.cc)
target_link_libraries(nbdk_rbd_lock_breaker PUBLIC nbdk_ceph)
