"""An emulated cluster on one machine: network namespaces as nodes, one torchrun agent each."""
