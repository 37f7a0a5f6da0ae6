# nbdk_topology: a node's labels, topology segments and CRUSH location;
# pure, and apart so that the daemon's config parser (fuzzed) has it alone.
add_library(nbdk_topology STATIC ${CMAKE_CURRENT_LIST_DIR}/topology.cc)
target_link_libraries(nbdk_topology PUBLIC nbdk_core)

# nbdk_csi_node: the pure request checks both services share and ceph-csi's
# config.json; the Node's own request parser is csi/node/'s
# (nbdk_node_request).
add_library(nbdk_csi_node STATIC
  ${CMAKE_CURRENT_LIST_DIR}/cluster_config.cc
  ${CMAKE_CURRENT_LIST_DIR}/encryption_options.cc
  ${CMAKE_CURRENT_LIST_DIR}/map_options.cc
  ${CMAKE_CURRENT_LIST_DIR}/mkfs_options.cc
  ${CMAKE_CURRENT_LIST_DIR}/mount_flags.cc
  ${CMAKE_CURRENT_LIST_DIR}/request_secrets.cc
  ${CMAKE_CURRENT_LIST_DIR}/storage_class_keys.cc
  ${CMAKE_CURRENT_LIST_DIR}/volume_capability.cc
)
target_include_directories(nbdk_csi_node PRIVATE ${RAPIDJSON_INCLUDE})
target_link_libraries(nbdk_csi_node PUBLIC nbdk_core nbdk_topology nbdk_ceph_names nbdk_csi_messages nbdk_supervisor nbdk_volume_id
  nbdk_volume_key)
