"""Adapters that trace memory systems from other packages (mem0ai) in place, without editing them."""
