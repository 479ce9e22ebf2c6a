from __future__ import annotations

import os

import pytest

from trainer_lab.cluster.network import existing_names, owner_of


@pytest.fixture(autouse=True)
def _no_cluster_left() -> object:
    """After every test nothing named with this process's prefix remains (ip netns, ip link)."""
    yield
    left = [name for name in existing_names() if owner_of(name) == os.getpid()]
    assert not left, f"cluster leftovers: {left}"
