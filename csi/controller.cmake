# nbdk_csi_controller_request: the pure parts of the CSI Controller service
# (request validation, image features, the volume context).
add_library(nbdk_csi_controller_request STATIC
  ${CMAKE_CURRENT_LIST_DIR}/controller_request.cc
  ${CMAKE_CURRENT_LIST_DIR}/snapshot_request.cc)
target_link_libraries(nbdk_csi_controller_request PUBLIC nbdk_csi_node ${RBD_LIB})

# nbdk_controller_service: the CSI Controller service - volumes, snapshots
# and clones on RBD with ceph-csi's omap journals.
add_library(nbdk_controller_service STATIC
  ${CMAKE_CURRENT_LIST_DIR}/clone_operations.cc
  ${CMAKE_CURRENT_LIST_DIR}/controller_operations.cc
  ${CMAKE_CURRENT_LIST_DIR}/controller_service.cc
  ${CMAKE_CURRENT_LIST_DIR}/controller_snapshots.cc
  ${CMAKE_CURRENT_LIST_DIR}/snapshot_operations.cc
  ${CMAKE_CURRENT_LIST_DIR}/volume_claim.cc
)
target_link_libraries(nbdk_controller_service PUBLIC
  nbdk_csi nbdk_csi_controller_request nbdk_node_ops nbdk_omap_journal nbdk_ceph)
