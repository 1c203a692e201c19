"""The front door: the typer CLI (`memtrace ...`), its rich tables and progress bars."""
