"""The online-softmax model (ks.ops.online_softmax_attention) walking s2 in chunks equals the whole-row softmax
attention within the dtype's tolerance, for any chunk size (one column, a tail, more than S) and shape."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kernelstudio as ks

TOL = {"float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}  # about 4 ulps of the output near 1


@settings(max_examples=40, deadline=None)
@given(sq=st.integers(1, 24), skv=st.integers(1, 70), d=st.sampled_from([16, 64, 128]), g=st.sampled_from([1, 2, 3]),
       chunk=st.integers(1, 80), causal=st.booleans(), dtype=st.sampled_from(list(TOL)), seed=st.integers(0, 99))
def test_online_softmax_matches_the_plain_softmax(sq, skv, d, g, chunk, causal, dtype, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(s).astype(np.float32)
               for s in ((1, 2 * g, sq, d), (1, 2, skv, d), (1, 2, skv, d)))
    q, k, v = (np.asarray(ks.core.dtypes.round_to(dtype, x), np.float32) * 2 for x in (q, k, v))
    mask = np.triu(np.ones((sq, skv), np.int8), 1) if causal else None
    got = np.asarray(ks.ops.online_softmax_attention(q, k, v, chunk=chunk, mask=mask, dtype=dtype), np.float64)
    want = ks.ops.plain_softmax_attention(q, k, v, mask=mask)
    np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=TOL[dtype])


def test_the_rescaling_is_what_keeps_it_exact():
    """A later chunk with a larger max rescales the earlier ones: leaving out e = exp(m_prev - m) is wrong."""
    q = np.ones((1, 1, 1, 4), np.float32)
    k = np.array([[[[0.0] * 4, [2.0] * 4]]], np.float32)  # the second key's score is far larger
    v = np.array([[[[1.0] * 4, [3.0] * 4]]], np.float32)
    one = ks.ops.online_softmax_attention(q, k, v, chunk=1)
    whole = ks.ops.online_softmax_attention(q, k, v, chunk=2)
    np.testing.assert_allclose(one, whole, rtol=1e-6)
    np.testing.assert_allclose(one, ks.ops.plain_softmax_attention(q, k, v), rtol=1e-6)
    p0 = 1.0 / (1.0 + np.exp(4.0))  # softmax weight of the first key, scale 1/2: scores 0 and 4
    np.testing.assert_allclose(one[0, 0, 0, 0], p0 * 1 + (1 - p0) * 3, rtol=1e-6)


def test_online_softmax_refuses_bad_chunks_and_heads():
    x = np.zeros((1, 3, 4, 8), np.float32)
    kv = np.zeros((1, 2, 4, 8), np.float32)
    with pytest.raises(ks.ShapeError, match="3 query heads over 2"):
        ks.ops.online_softmax_attention(x, kv, kv, chunk=2)
    with pytest.raises(ks.ShapeError, match="chunk=0"):
        ks.ops.online_softmax_attention(kv, kv, kv, chunk=0)
