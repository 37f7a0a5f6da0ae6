# nbdk_omap_journal: the write side of ceph-csi's omap volume journal, for
# the Controller service, on the Ceph room's omap access (ceph/).
add_library(nbdk_omap_journal STATIC
  ${CMAKE_CURRENT_LIST_DIR}/omap_volume_journal.cc
)
target_link_libraries(nbdk_omap_journal PUBLIC nbdk_ceph)
