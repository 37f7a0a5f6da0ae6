# csi_controller_test: the pure parts of the CSI Controller service.
nbdk_add_test(csi_controller_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/controller_request_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/op_locks_test.cc
  LIBS nbdk_csi_controller_request)

