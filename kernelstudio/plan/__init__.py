"""Planning by cost: the cost-aware fusion choice (choose.py), `ks.create_schedule` with that choice plugged in
(create.py), `ks.lower` with the double-buffer choice checked by the simulator (depth.py), `ks.build`
(build.py) and the advisor, `d.advise()` (advise.py: evidence, rules, every move simulated). The one place
that lowers and simulates in order to choose.

Stage 8. It may import every stage below it: core/ to codegen/.
"""
