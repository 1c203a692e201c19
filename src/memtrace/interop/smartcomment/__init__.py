"""smartcomment graph JSON, the format of the paper's code and MemTraceBench: reading, import, export."""
