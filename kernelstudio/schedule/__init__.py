"""Schedules as data: the fusion plan plus a tuple of frozen directives (split, reorder, parallel, double_buffer,
...), knobs, replay from JSON, and the golden model that follows a plan (rounding.py). No lowering and no
simulation here: the cost-aware fusion choice is handed in as a planner (plan/).

Stage 4. It may import core/, hw/, ir/ and fusion/.
"""
