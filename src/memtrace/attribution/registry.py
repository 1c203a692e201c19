"""Attribution methods by name: built-ins, `register_attributor()` calls, `memtrace.attributors` entry points.

A method is registered as a factory (a class or a function) returning an `AttributionMethod`, or as a
lazy `"module:factory"` path (an entry point's factory says it needs a model with `needs_llm = True`).
`make_method(name, llm=..., seed=..., scorer=..., **options)` passes the factory `llm`, `seed` and
`scorer` only when its signature names them, and the options it can take; so
`register_attributor("mine", MyMethod)` works for a class whose `__init__` takes no arguments.
`memtrace attribute --method NAME`, verify, report and the benchmarks find every method through here.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import MemtraceError
from ..plugins import PluginRegistry
from .model import AttributionMethod

ENTRY_POINT_GROUP = "memtrace.attributors"

Factory = Callable[..., AttributionMethod]
#: What every factory is offered, when its signature names it.
STANDARD = ("llm", "seed", "scorer")


@dataclass(slots=True)
class Attributor:
    """A registered method: how to make it and whether it needs an LLM client."""

    name: str
    factory: Factory | str
    needs_llm: bool = False


def _flow(*, llm: Any = None, scorer: str = "overlap", **options: Any) -> AttributionMethod:
    from .evidence.model_scorers import make_scorer
    from .methods.flow import FlowMethod

    return FlowMethod(make_scorer(scorer, llm), **options)


def _last_op() -> AttributionMethod:
    from .methods.baselines import LastOpMethod

    return LastOpMethod()


def _random(*, seed: int = 0) -> AttributionMethod:
    from .methods.baselines import RandomMethod

    return RandomMethod(seed)


def _agent(*, llm: Any, **options: Any) -> AttributionMethod:
    from .methods.agent import AgentMethod
    from .methods.flow import FlowMethod

    return AgentMethod(llm, seed_method=FlowMethod(), **options)


def _all_at_once(*, llm: Any, **options: Any) -> AttributionMethod:
    from .methods.all_at_once import AllAtOnceMethod

    return AllAtOnceMethod(llm, **options)


_registry: PluginRegistry[Attributor] = PluginRegistry(
    ENTRY_POINT_GROUP,
    "attribution method",
    lambda point: Attributor(point.name, point.value),
    owner=__name__,
)
for _builtin in (
    Attributor("flow", _flow),
    Attributor("agent", _agent, needs_llm=True),
    Attributor("all-at-once", _all_at_once, needs_llm=True),
    Attributor("last-op", _last_op),
    Attributor("random", _random),
):
    _registry.add_builtin(_builtin.name, _builtin)
#: The methods memtrace ships, in the order help texts list them.
BUILTIN_METHODS = ("flow", "agent", "all-at-once", "last-op", "random")


def register_attributor(
    name: str, factory: Factory | str, *, needs_llm: bool = False, replace: bool = False
) -> Factory | str:
    """Make an attribution method available by name to `attribute`, `verify`, `report` and the benchmarks.

    `factory` builds the method (a class or function; see the module docstring for its keywords) or
    is a lazy `"module:factory"` path. `needs_llm` makes an offline call fail with a clear message
    instead of inside the method. A taken name raises unless `replace=True`. Returns `factory`.
    """
    if not name or set(name) & set(", /"):
        raise MemtraceError(f"register_attributor: {name!r} is not a method name (no comma, space or slash)")
    if isinstance(factory, str) and ":" not in factory:
        raise MemtraceError(f"register_attributor({name!r}): {factory!r} is not a 'module:factory' path")
    if not isinstance(factory, str) and not callable(factory):
        raise MemtraceError(f"register_attributor({name!r}): {factory!r} is not callable")
    if _registry.get(name) is not None and not replace:
        raise MemtraceError(f"attribution method {name!r} is already registered (pass replace=True)")
    _registry.add(name, Attributor(name, factory, needs_llm))
    return factory


def unregister_attributor(name: str) -> None:
    """Forget a registered method (tests register throwaway ones); unknown names raise."""
    _registry.remove(name)


def method_names() -> list[str]:
    """Every registered method name: the built-ins first, then in registration order."""
    return _registry.names()


def check_method_name(name: str) -> None:
    """Raise the one-line error for a name no method is registered under."""
    _registered_method(name)


def _registered_method(name: str) -> Attributor:
    entry = _registry.get(name)
    if entry is None:
        raise MemtraceError(f"unknown attribution method {name!r} (choose {', '.join(method_names())})")
    return entry


def make_method(
    name: str, *, llm: Any = None, seed: int = 0, scorer: str = "overlap", **options: Any
) -> AttributionMethod:
    """The method registered as `name`, built with the keywords its factory accepts."""
    entry = _registered_method(name)
    factory = entry.factory
    if isinstance(factory, str):
        factory = entry.factory = _import(name, factory)
        entry.needs_llm = bool(getattr(factory, "needs_llm", False))  # an entry point's factory says
    if entry.needs_llm and llm is None:
        raise MemtraceError(f"method {name!r} needs an LLM: pass --llm openai --model ... --base-url ...")
    offered = {"llm": llm, "seed": seed, "scorer": scorer, **options}
    return factory(**_accepted(factory, offered, name))


def _accepted(factory: Factory, offered: dict[str, Any], name: str) -> dict[str, Any]:
    """The keywords of `offered` the factory takes: the standard ones it names, and the options (an
    option it cannot take raises)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no signature to read: the standard keywords only
        return {k: offered[k] for k in STANDARD}
    names = {p.name for p in parameters if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    unknown = [k for k in offered if k not in names and k not in STANDARD and not takes_any]
    if unknown:
        raise MemtraceError(f"method {name!r} takes no option {unknown[0]!r}")
    return {k: v for k, v in offered.items() if k in names or (k not in STANDARD and takes_any)}


def _import(name: str, target: str) -> Factory:
    module, _, attr = target.partition(":")
    try:
        loaded = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as err:
        raise MemtraceError(f"attribution method {name!r}: cannot load {target} ({err})") from err
    if not callable(loaded):
        raise MemtraceError(f"attribution method {name!r}: {target} is not callable")
    return loaded
