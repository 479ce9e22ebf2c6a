from __future__ import annotations

import pytest

from trainer_lab.cluster.smoke import smoke


@pytest.mark.lab
def test_two_node_all_reduce_across_namespaces_returns_the_sum() -> None:
    result = smoke(2, deadline_s=90)
    assert result.mode == "netns", result.note
    assert not result.timed_out
    assert result.returncodes == {0: 0, 1: 0}
    assert result.sums == {0: 3.0, 1: 3.0}  # (0 + 1) + (1 + 1)
    assert result.group_ranks == {0: 0, 1: 1}  # one rank on each node
    assert result.ok
