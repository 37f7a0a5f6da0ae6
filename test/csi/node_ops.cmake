nbdk_add_test(node_ops_test SOURCES confined_path_test.cc mount_table_test.cc node_ops_test.cc stash_test.cc
  LIBS nbdk_node_ops nbdk_key_file)

# The Node service on the real kernel and Ceph: runs in the VM. With it,
# in the same boot, a Nomad client's paths, call order and restart.
nbdk_add_node_vm_test(NAME node_vm SOURCES node_vm_test.cc node_safety_vm_test.cc nomad_vm_test.cc TIMEOUT 1080)

# One writer per volume across nodes: two daemons as two nodes of one
# cluster, in the VM.
nbdk_add_node_vm_test(NAME two_node_vm SOURCES two_node_vm_test.cc TIMEOUT 600)
