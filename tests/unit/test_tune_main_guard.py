"""A plain script that tunes without a main guard is refused before any worker starts, and told what to do."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from kernelstudio.tune.executors import _has_main_guard

SCRIPT = textwrap.dedent("""
    import kernelstudio as ks

    def design():
        x = ks.placeholder((64, 64), "float16", name="x")
        s = ks.create_schedule(ks.exp(x))
        s[s.kernels[0].name].split(0, ks.knob("rows", 2, [1, 2, 4]))
        return s

    try:
        ks.tune(design, budget=3, progress=False)
    except ks.TuneError as e:
        print("REFUSED:", e)
    r = ks.tune(design, budget=3, progress=False, executor="inline")
    print("INLINE:", r.feasible, r.best_time_us > 0)
""")


def test_an_unguarded_script_is_refused_and_inline_still_works(tmp_path):
    script = tmp_path / "sweep.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    refused = next(line for line in proc.stdout.splitlines() if line.startswith("REFUSED:"))
    assert str(script) in refused and 'if __name__ == "__main__":' in refused and "executor='inline'" in refused
    assert "INLINE: True True" in proc.stdout


@pytest.mark.parametrize("source, guarded", [
    ('if __name__ == "__main__":\n    main()\n', True),
    ("if '__main__' == __name__:\n    main()\n", True),
    ("main()\n", False),
    ('def f():\n    if __name__ == "__main__":\n        pass\nf()\n', False),  # only a top-level block counts
    ('if __name__ == "x":\n    main()\n', False),
])
def test_the_main_guard_is_found_at_the_top_level_in_either_order(source, guarded):
    assert _has_main_guard(source) is guarded
