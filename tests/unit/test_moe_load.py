"""The MoE block's token-imbalance distributions: rows per expert and a routing that realises them exactly."""

from __future__ import annotations

import numpy as np
import pytest

import kernelstudio as ks
from kernelstudio.ops.moe_load import IMBALANCES, expert_loads, route_tokens

SMALL = dict(tokens=64, experts=8, top_k=2)
DSV3 = dict(tokens=4096, experts=256, top_k=8, groups=8, topk_groups=4)


def test_small_loads_are_the_documented_numbers():
    assert expert_loads("uniform", **SMALL) == (16,) * 8
    # Zipf s=1.2 weights 1, 2^-1.2, ...: expert 0's share 128 * 0.38 = 48.7 stays under the 64 cap
    assert expert_loads("zipf", **SMALL) == (55, 24, 15, 10, 8, 6, 5, 5)
    # one hot: expert 0 takes all 64 tokens, the other 64 picks spread over 7 experts (9.14 each)
    assert expert_loads("one_hot", **SMALL) == (64, 10, 9, 9, 9, 9, 9, 9)


@pytest.mark.parametrize("imbalance", IMBALANCES)
@pytest.mark.parametrize("args", [SMALL, DSV3, dict(tokens=7, experts=8, top_k=2),
                                  dict(tokens=33, experts=16, top_k=4, groups=4, topk_groups=2)],
                         ids=["small", "dsv3", "few_tokens", "grouped"])
def test_routing_realises_the_loads_exactly(imbalance, args):
    loads = expert_loads(imbalance, **args)
    t, k, e = args["tokens"], args["top_k"], args["experts"]
    assert sum(loads) == t * k and max(loads) <= t
    ids = route_tokens(loads, tokens=t, top_k=k, groups=args.get("groups", 1),
                       topk_groups=args.get("topk_groups", 1))
    assert ids.shape == (t, k) and ids.dtype == np.int32
    assert tuple(np.bincount(ids.ravel(), minlength=e)) == loads
    assert all(len(set(row)) == k for row in ids.tolist())  # a token picks an expert at most once
    if "groups" in args:  # every token's experts lie in exactly topk_groups groups
        per = e // args["groups"]
        assert {len({int(x) // per for x in row}) for row in ids} == {args["topk_groups"]}


def test_loads_are_deterministic_and_ordered():
    z = expert_loads("zipf", **DSV3)
    expert_loads("one_hot", **DSV3)  # another call in between leaves no state behind
    assert expert_loads("zipf", **DSV3) == z
    assert z[0] == max(z) and z[0] > 20 * min(z)  # the head expert far above the tail
    assert expert_loads("one_hot", **DSV3)[0] == 4096  # every token
    assert set(expert_loads("uniform", **DSV3)) == {128}


def test_custom_loads_with_an_empty_and_a_full_expert_route():
    loads = (64, 0, 16, 16, 16, 16, 0, 0)
    ids = route_tokens(loads, tokens=64, top_k=2)
    assert tuple(np.bincount(ids.ravel(), minlength=8)) == loads
    assert (ids == 0).any(axis=1).all()


@pytest.mark.parametrize("call, match", [
    (lambda: expert_loads("pareto", **SMALL), "not one of"),
    (lambda: expert_loads("uniform", tokens=64, experts=10, top_k=2, groups=4), "do not split into 4 groups"),
    (lambda: expert_loads("uniform", tokens=64, experts=8, top_k=3, groups=2, topk_groups=2), "not a multiple"),
    (lambda: expert_loads("uniform", tokens=64, experts=8, top_k=2, groups=2, topk_groups=4), "exceeds groups"),
    (lambda: expert_loads("uniform", tokens=0, experts=8, top_k=2), "tokens must be a positive int"),
    (lambda: route_tokens((65, 63, 0, 0, 0, 0, 0, 0), tokens=64, top_k=2), "at most 64 each"),
    (lambda: route_tokens((16,) * 7, tokens=64, top_k=2), "sum to 128"),
])
def test_bad_routing_arguments_say_what_and_how(call, match):
    with pytest.raises(ks.InputError, match=match):
        call()
