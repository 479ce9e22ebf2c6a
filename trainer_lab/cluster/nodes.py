"""How many nodes a lab runs on (torch-free): a cluster lab says so in its SPEC's extra
({"nodes": N}); every other lab runs on one node."""

from __future__ import annotations

from trainer_lab.catalogue_types import LabSpec, ParamError
from trainer_lab.cluster.network import MAX_NODES

NODES_KEY = "nodes"


def lab_nodes(spec: LabSpec) -> int:
    """The nodes of an emulated cluster the lab brings up (1: it runs on this node only)."""
    return int(spec.extra.get(NODES_KEY, 1))


def check_nnodes(spec: LabSpec, nnodes: int) -> int:
    """`--nnodes` for a lab: in 1..MAX_NODES and what the lab runs on; ParamError in one line
    naming the labs that run on that many nodes otherwise."""
    if not 1 <= nnodes <= MAX_NODES:
        raise ParamError(f"--nnodes {nnodes}: this machine emulates 1 to {MAX_NODES} nodes")
    if nnodes != lab_nodes(spec):
        from trainer_lab.catalogue import CATALOGUE

        fitting = [name for name, other in CATALOGUE.items() if lab_nodes(other) == nnodes]
        others = ", ".join(fitting) if nnodes > 1 else "every other lab"
        raise ParamError(
            f"lab {spec.name} runs on {lab_nodes(spec)} node(s), not {nnodes} "
            f"(labs on {nnodes} node(s): {others or 'none'})"
        )
    return nnodes
