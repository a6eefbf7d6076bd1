"""The Passes view's line diff is difflib's (`SequenceMatcher(autojunk=False)`), found without difflib's index:
the same opcodes for texts alike and unlike, lines repeated or not, so the diff a pass shows and its line
counts do not depend on which search found them."""

from __future__ import annotations

import difflib
import random

from kernelstudio.notebook import views as V
from kernelstudio.notebook.views import passes as P


def _edited(rng: random.Random, lines: list[str], alphabet: int) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(0, 5)):
        pos = rng.randint(0, len(out))
        op = rng.randrange(3)
        if op == 0:
            out.insert(pos, str(rng.randrange(alphabet + 3)))
        elif out and op == 1:
            del out[min(pos, len(out) - 1)]
        elif out:
            out[min(pos, len(out) - 1)] = str(rng.randrange(alphabet + 3))
    return out


def test_the_opcodes_are_difflibs_for_random_texts():
    rng = random.Random(7)
    fallbacks = 0
    for _ in range(3000):
        alphabet = rng.randint(1, 12)  # few distinct lines: many repeats, ties between equal-length blocks
        a = [str(rng.randrange(alphabet)) for _ in range(rng.randint(0, 30))]
        b = _edited(rng, a, alphabet) if rng.random() < 0.5 else [str(rng.randrange(alphabet))
                                                                    for _ in range(rng.randint(0, 30))]
        before, after = "\n".join(a), "\n".join(b)
        want = difflib.SequenceMatcher(a=before.splitlines(), b=after.splitlines(), autojunk=False).get_opcodes()
        assert P._opcodes.__wrapped__(before, after)[2] == tuple(want), (a, b)
        fallbacks += P._runs(a, b) is None
    assert 0 < fallbacks < 3000  # both searches were checked


def test_a_pass_diff_keeps_difflibs_choice_among_equal_blocks():
    # " abcd" against "abcd abcd": the longest block is the whole of a, matched at the end of b
    before, after = "\n".join(" abcd"), "\n".join("abcd abcd")
    assert P._opcodes.__wrapped__(before, after)[2] == (("insert", 0, 0, 0, 4), ("equal", 0, 5, 4, 9))
    diff = V.pass_diff("x\ny\nx\ny\nz", "x\ny\nz")
    assert diff == [("-", "x"), ("-", "y"), (" ", "x"), (" ", "y"), (" ", "z")]
