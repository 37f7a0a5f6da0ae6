# csi_node_test: the pure building blocks of the CSI Node service that
# the Controller shares (csi/node.cmake); the Node's own are in node/.
nbdk_add_test(csi_node_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/cluster_config_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/map_options_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/mkfs_options_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/mount_flags_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/topology_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/volume_capability_test.cc
  LIBS nbdk_csi_node)
