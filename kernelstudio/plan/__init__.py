"""Planning by cost: the cost-aware fusion choice (choose.py), `ks.create_schedule` with that choice plugged in
(create.py), `ks.lower` with the double-buffer choice checked by the simulator (depth.py) and `ks.build`
(build.py). The one place that lowers and simulates in order to choose.

Stage 8. It may import every stage below it: core/ to codegen/.
"""
