nbdk_add_test(node_ops_test SOURCES node_ops_test.cc LIBS nbdk_node_ops)
