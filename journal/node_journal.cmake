# nbdk_node_journal: the durable node journal - one checksummed file per
# staged volume (VolumeRecord), written with temp file + fsync + rename.
add_library(nbdk_node_journal STATIC
  ${CMAKE_CURRENT_LIST_DIR}/node_boot_id.cc
  ${CMAKE_CURRENT_LIST_DIR}/node_crc32c.cc
  ${CMAKE_CURRENT_LIST_DIR}/node_journal.cc
  ${CMAKE_CURRENT_LIST_DIR}/node_journal_fs.cc
  ${CMAKE_CURRENT_LIST_DIR}/node_record_file_name.cc
  ${CMAKE_CURRENT_LIST_DIR}/node_record_frame.cc
  ${CMAKE_CURRENT_LIST_DIR}/volume_record.cc
)
target_include_directories(nbdk_node_journal PRIVATE ${RAPIDJSON_INCLUDE})
target_link_libraries(nbdk_node_journal PUBLIC nbdk_core nbdk_volume_id nbdk_ceph_names)
