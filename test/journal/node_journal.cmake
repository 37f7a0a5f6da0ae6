# Tests of the node journal: record codec, file names, frames, quarantine,
# the sticky fsync error, a full disk and the SIGKILL crash test.
nbdk_add_test(node_journal_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/node_volume_record_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/node_journal_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/node_journal_crash_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/node_journal_full_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/volume_id_test.cc
  LIBS nbdk_node_journal)
# Outside the unity batch (CMakeLists.txt): its names meet the record tests'.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/volume_id_test.cc PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
target_include_directories(node_journal_test PRIVATE ${RAPIDJSON_INCLUDE})
