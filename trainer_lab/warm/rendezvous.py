"""A one-node rendezvous for the warm agent: torch's static TCP rendezvous on a free port.

`torchrun --standalone` uses the c10d dynamic rendezvous on localhost:0. That protocol exists to
let several nodes agree on a round; alone on one node it only adds a random 0-0.3 s delay before
its first round (to spread the load of many nodes on the store) and records of each state change.
Registered under the name "drill-local" through elastic's rendezvous registry (its extension
point), this handler is `StaticTCPRendezvous` (the agent's TCPStore, which the ranks use as
theirs: MASTER_ADDR/PORT, TORCHELASTIC_USE_AGENT_STORE) whose store binds port 0, so no port is
picked in advance and none can be taken in between. Restarts reuse the store, each attempt under
its own prefix, as with the static rendezvous.

It stands in for c10d only where the two cannot differ (`fits`): one round (no restarts; c10d
gives each restart round its own store when TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1, which the
elastic-restart lab shows) and the ranks sharing the agent's store (that variable unset).
"""

from __future__ import annotations

import os

from torch.distributed import TCPStore
from torch.distributed.elastic.rendezvous import (
    RendezvousHandler,
    RendezvousInfo,
    RendezvousParameters,
    rendezvous_handler_registry,
)
from torch.distributed.elastic.rendezvous.static_tcp_rendezvous import StaticTCPRendezvous

BACKEND = "drill-local"
SHARE_OFF = "TORCH_DISABLE_SHARE_RDZV_TCP_STORE"
_TIMEOUT_S = 600


class LocalRendezvous(StaticTCPRendezvous):
    def get_backend(self) -> str:
        return BACKEND

    def next_rendezvous(self) -> RendezvousInfo:
        if self._store is None:
            store = TCPStore(  # type: ignore[call-arg]
                self.master_addr, 0, 1, True, self.timeout, multi_tenant=True
            )
            self._store = store
            self.master_port = store.port
        return super().next_rendezvous()


def create_handler(params: RendezvousParameters) -> RendezvousHandler:
    if params.max_nodes != 1:
        raise ValueError(f"the {BACKEND} rendezvous runs one node, not {params.max_nodes}")
    timeout = int(params.config.get("timeout", _TIMEOUT_S))
    return LocalRendezvous("localhost", 0, 0, 1, params.run_id, timeout)  # as c10d gives


def fits(max_restarts: int) -> bool:
    return max_restarts == 0 and os.environ.get(SHARE_OFF, "0") != "1"


def register() -> None:
    rendezvous_handler_registry.register(BACKEND, create_handler)
