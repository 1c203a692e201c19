"""Adapters that trace other packages' memory systems as they run: `memtrace.adapters.mem0ai`."""
