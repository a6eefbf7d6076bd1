"""Stage 0, the ground floor: errors, dtypes (sizes, the 32-byte block, the 256-byte repeat), names, input checks,
file writing and the one settings module (default target, thresholds, cache limits, environment variables).

It may import nothing else of kernelstudio.
"""
