"""The public face of the adapters that trace other packages' memory systems (`memtrace.adapters.mem0ai`).

The code lives in `memtrace.systems.adapters`; this package only re-exports it under a short path.
"""
