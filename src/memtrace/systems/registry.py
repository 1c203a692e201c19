"""The memory systems by name: the built-ins, `register_system()` calls and `memtrace.systems` entry points.

A system is registered as its class or as a lazy `"module:Class"` path, imported on first use, so one
broken system does not break the rest. Installed packages add systems without any edit here by
declaring an entry point in the group `memtrace.systems` (name = system name, value = `module:Class`).
`memtrace run`, replay, verification, the optimiser and the report find every system through here.
"""

from __future__ import annotations

import importlib
import importlib.util
import warnings

from ..errors import MemtraceError
from ..plugins import PluginRegistry
from .base import MemorySystem
from .tunable_routes import Route

ENTRY_POINT_GROUP = "memtrace.systems"

#: The systems memtrace ships, in the order `--system all` runs them.
BUILTIN_SYSTEMS = {
    "long_context": "memtrace.systems.long_context:LongContext",
    "rag": "memtrace.systems.rag:RAGSystem",
    "mem0": "memtrace.systems.mem0:Mem0System",
    "evermemos": "memtrace.systems.evermemos:EverMemOSSystem",
}

#: Adapters of other packages, registered when that package is installed (its extra named here
#: otherwise); they need a model, so an offline `--system all` leaves them out.
ADAPTER_SYSTEMS = {
    "mem0ai": ("mem0", "memtrace.systems.mem0ai_system:Mem0AISystem", "pip install 'memtrace[mem0ai]'"),
}

_registry: PluginRegistry[type[MemorySystem] | str] = PluginRegistry(
    ENTRY_POINT_GROUP, "system", lambda point: point.value, owner=__name__
)
for _name, _path in BUILTIN_SYSTEMS.items():
    _registry.add_builtin(_name, _path)
for _name, (_module, _target, _) in ADAPTER_SYSTEMS.items():
    if importlib.util.find_spec(_module) is not None:
        _registry.add_builtin(_name, _target)


def register_system[S: type[MemorySystem]](
    system: S | str, *, name: str | None = None, replace: bool = False
) -> S | str:
    """Make a memory system available by name to `memtrace run`, replay, verification and the optimiser.

    `system` is a MemorySystem subclass (its `name` is the default name) or a lazy `"module:Class"`
    path (then `name` is required). Usable as a class decorator. Registering a taken name raises
    unless `replace=True`. Returns `system` unchanged.
    """
    if isinstance(system, str):
        if not name:
            raise MemtraceError(f"register_system({system!r}): a lazy 'module:Class' path needs name=")
        if ":" not in system:
            raise MemtraceError(f"register_system({system!r}): expected a 'module:Class' path")
    else:
        _check_class(system)
        if name is not None and name != system.name:
            raise MemtraceError(
                f"register_system: {system.__qualname__}.name is {system.name!r}, not {name!r}; "
                "the name is recorded on every run, so replay must find the class by it"
            )
        name = system.name
    taken = _registry.get(name)
    if taken is not None and not replace and taken is not system:
        raise MemtraceError(f"system {name!r} is already registered (pass replace=True to override it)")
    _registry.add(name, system)
    return system


def unregister_system(name: str) -> None:
    """Forget a registered system (tests register throwaway ones); unknown names raise."""
    _registry.remove(name)


def system_names() -> list[str]:
    """Every registered system name: the built-ins first, then in registration order."""
    return _registry.names()


def system_class(name: str) -> type[MemorySystem]:
    """The class registered as `name`, imported on first use; an unknown name raises MemtraceError."""
    target = _registry.get(name)
    if target is None:
        if name in ADAPTER_SYSTEMS:
            raise MemtraceError(f"system {name!r} needs its package: {ADAPTER_SYSTEMS[name][2]}")
        raise MemtraceError(f"unknown system {name!r} (choose {', '.join(_registry.names())} or all)")
    if isinstance(target, str):
        target = _import(name, target)
        _registry.loaded(name, target)
    return target


def find_system(name: str | None) -> type[MemorySystem] | None:
    """The class registered as `name`, or None for a run of an unregistered system (an import)."""
    if not name or name not in system_names():
        return None
    return system_class(name)


def loadable_systems() -> dict[str, type[MemorySystem]]:
    """Every registered system whose class loads, by name; one that does not (a plugin whose optional
    dependency is missing) is named in a warning and left out, so it breaks only itself."""
    loaded: dict[str, type[MemorySystem]] = {}
    for name in system_names():
        try:
            loaded[name] = system_class(name)
        except MemtraceError as err:
            warnings.warn(f"{err}; left out", stacklevel=2)
    return loaded


def system_routes(name: str | None) -> tuple[Route, ...]:
    """The routes a registered system declares; none for a run of an unregistered system (or, with a
    warning, of one whose class does not load)."""
    try:
        cls = find_system(name)
    except MemtraceError as err:
        warnings.warn(f"{err}; its routes are left out", stacklevel=2)
        return ()
    return cls.routes if cls is not None else ()


def memtracebench_splits() -> dict[str, str]:
    """MemTraceBench split -> the registered system that declares it, in registration order (what
    `interop.load_memtracebench(systems=...)` takes, since graph/ knows no system)."""
    splits: dict[str, str] = {}
    for name, cls in loadable_systems().items():
        if cls.memtracebench_split:
            splits.setdefault(cls.memtracebench_split, name)
    return splits


def _import(name: str, target: str) -> type[MemorySystem]:
    module, _, attr = target.partition(":")
    try:
        loaded = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as err:
        raise MemtraceError(f"system {name!r}: cannot load {target} ({err})") from err
    _check_class(loaded)
    if loaded.name != name:
        raise MemtraceError(f"system {name!r}: {target} is named {loaded.name!r}")
    return loaded


def _check_class(system: object) -> None:
    if not (isinstance(system, type) and issubclass(system, MemorySystem)):
        raise MemtraceError(f"register_system: {system!r} is not a MemorySystem subclass")
    if not isinstance(getattr(system, "name", None), str) or not system.name:
        raise MemtraceError(f"register_system: {system.__qualname__} has no `name`")


def reload_entry_points() -> None:
    """Forget the systems entry points added and read the group again (after installing a package)."""
    _registry.reload()
