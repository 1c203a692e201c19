"""The FastAPI app: server-rendered pages (jinja2) and the JSON API they are built from.

Every page has a JSON twin under /api (documented at /docs by FastAPI's OpenAPI schema). An
unknown run, case or operation answers 404 with `{"error": ...}`; pages render the same message.
A malformed or out-of-range query or path value is a 400 (a page for pages, JSON for the API);
guard.py turns away foreign hosts and foreign writes before any of this runs.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import quote

import jinja2
from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..graph import AmbiguousRunError, Annotation, NotFoundError, Workspace
from ..vocabulary import MEMORY_ERROR_TYPES, NON_MEMORY_ERROR_TYPES
from .context import RunContexts
from .guard import LOOPBACK, Guard, security_headers
from .memory import memory_diff, memory_state
from .operation import operation_detail
from .runs import case_rows, filter_cases, run_rows
from .story import case_story
from .subgraph import case_subgraph

HERE = Path(__file__).parent
#: The labels a person may give: the memory taxonomy plus the two non-memory labels.
LABELS: tuple[str, ...] = tuple(str(t) for t in (*MEMORY_ERROR_TYPES, *NON_MEMORY_ERROR_TYPES))
T = TypeVar("T")
#: Case stories kept for the graph requests that follow their pages.
RECENT_STORIES = 16
#: SQLite's largest integer: a bigger number reaching a query is an OverflowError, so a 500.
INT64_MAX = 2**63 - 1
#: A seq as a query value: none is negative, and SQLite must be able to hold it.
Seq = Annotated[int, Query(ge=0, le=INT64_MAX)]


class AnnotationIn(BaseModel):
    """A human label for a case, as the case page's form sends it."""

    error_type: str = Field(description="One of the taxonomy's labels, AnnotationError or JudgeError.")
    op_id: str | None = Field(default=None, description="The decisive operation, if the label names one.")
    note: str | None = Field(default=None, max_length=4000)
    author: str | None = Field(default=None, max_length=200)


class UI:
    """One workspace served: its connection, per-run caches and a lock serialising reads."""

    def __init__(self, workspace: str | Path) -> None:
        self.ws = Workspace(workspace)
        self.contexts = RunContexts(self.ws)
        self._lock = threading.RLock()
        self._stories: dict[tuple[str, str], dict[str, Any]] = {}

    def remember_story(self, run_id: str, case_id: str, story: dict[str, Any]) -> None:
        """Keep a few recent stories for the graph request that follows each case page."""
        self._stories[(run_id, case_id)] = story
        while len(self._stories) > RECENT_STORIES:
            self._stories.pop(next(iter(self._stories)))

    def recent_story(self, run_id: str, case_id: str) -> dict[str, Any] | None:
        return self._stories.get((run_id, case_id))

    @contextmanager
    def reading(self) -> Iterator[Workspace]:
        with self._lock:
            yield self.ws

    def call(self, build: Callable[[], T]) -> T:
        """Run a read under the lock, turning a missing record into a 404."""
        with self._lock:
            try:
                return build()
            except (NotFoundError, AmbiguousRunError) as exc:
                raise HTTPException(status_code=404, detail=str(exc)) from None


def create_app(workspace: str | Path, *, port: int, host: str = LOOPBACK) -> FastAPI:
    """The web UI of one workspace folder, answering only requests addressed to `host`:`port`
    (or a loopback name with that port), the address it is served on."""
    ui = UI(workspace)
    app = FastAPI(
        title="memtrace UI",
        description="Walk a run's memory evolution graph, see why a case failed, annotate it.",
        version="1",
    )
    app.state.ui = ui
    app.add_middleware(Guard, host=host, port=port)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    # Every template escapes what it prints: runs, cases and labels are data anyone may have written.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True)
    templates = Jinja2Templates(env=env)
    templates.env.filters["q"] = lambda value: quote(str(value), safe="")
    templates.env.filters["pct"] = lambda value: "\u2013" if value is None else f"{100 * value:.1f}%"
    templates.env.globals["labels"] = LABELS
    templates.env.globals["workspace"] = str(workspace)
    for name in templates.env.list_templates():  # compiled now, not on a user's first request
        templates.env.get_template(name)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.detail}, status_code=exc.status_code)
        return templates.TemplateResponse(
            request,
            "error.html",
            {"message": exc.detail, "status": exc.status_code},
            status_code=exc.status_code,
        )

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> Any:
        """A bad query or path value is the request's fault (400); a bad label body stays a 422."""
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        in_url = all(e["loc"] and e["loc"][0] in ("query", "path") for e in exc.errors())
        return await http_error(request, StarletteHTTPException(400 if in_url else 422, problems))

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> Response:
        """A bug's 500, sent outside the guard: it carries the security headers all the same."""
        response = await http_error(request, StarletteHTTPException(500, "internal error (see the console)"))
        response.headers.update(security_headers(request.url.path))
        return response

    def page(request: Request, name: str, **context: Any) -> HTMLResponse:
        started = time.perf_counter()
        response = templates.TemplateResponse(request, name, context)
        response.headers["Server-Timing"] = f"render;dur={1000 * (time.perf_counter() - started):.1f}"
        return response

    # -- JSON API -----------------------------------------------------------------------------

    @app.get("/api/runs", summary="Every run with accuracy and failures by error type")
    def api_runs(replays: bool = False) -> list[dict[str, Any]]:
        return ui.call(lambda: run_rows(ui.ws, replays=replays))

    @app.get("/api/runs/{run_id}", summary="One run's row of the runs table")
    def api_run(run_id: str) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            run = ui.ws.run(run_id)
            return next(r for r in run_rows(ui.ws, replays=True) if r["id"] == run.id)

        return ui.call(build)

    @app.get("/api/runs/{run_id}/cases", summary="A run's cases, filtered")
    def api_cases(
        run_id: str,
        verdict: str | None = Query(None, description="wrong or correct"),
        error_type: str | None = None,
        q: str | None = Query(None, description="words of the question"),
    ) -> list[dict[str, Any]]:
        def build() -> list[dict[str, Any]]:
            run = ui.ws.run(run_id)
            rows = filter_cases(case_rows(ui.ws, run.id), verdict=verdict, error_type=error_type, query=q)
            return [row.to_dict() for row in rows]

        return ui.call(build)

    @app.get("/api/runs/{run_id}/cases/{case_id}", summary="A case's story")
    def api_case(run_id: str, case_id: str) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            story = case_story(ui.ws, ui.contexts.get(run_id), case_id)
            ui.remember_story(run_id, case_id, story)
            return story

        return ui.call(build)

    @app.get("/api/runs/{run_id}/cases/{case_id}/graph", summary="The case's subgraph (Cytoscape elements)")
    def api_case_graph(run_id: str, case_id: str) -> dict[str, Any]:
        def build() -> dict[str, Any]:
            ctx = ui.contexts.get(run_id)
            # The page asks for its graph right after rendering the story: reuse it.
            story = ui.recent_story(run_id, case_id) or case_story(ui.ws, ctx, case_id)
            return case_subgraph(ctx.graph, story)

        return ui.call(build)

    @app.get("/api/runs/{run_id}/ops/{op_id}", summary="An operation's inputs, outputs and unit diffs")
    def api_op(run_id: str, op_id: str) -> dict[str, Any]:
        return ui.call(lambda: operation_detail(ui.contexts.get(run_id).graph, op_id))

    @app.get("/api/runs/{run_id}/memory", summary="The memory store as of a seq")
    def api_memory(run_id: str, seq: Seq | None = None) -> dict[str, Any]:
        return ui.call(lambda: memory_state(ui.contexts.get(run_id), seq))

    @app.get("/api/runs/{run_id}/memory/diff", summary="Memory units changed between two seqs")
    def api_memory_diff(
        run_id: str,
        a: Annotated[int, Query(alias="from", ge=0, le=INT64_MAX)],
        b: Annotated[int, Query(alias="to", ge=0, le=INT64_MAX)],
    ) -> dict[str, Any]:
        return ui.call(lambda: memory_diff(ui.contexts.get(run_id), a, b))

    @app.get("/api/runs/{run_id}/cases/{case_id}/annotations", summary="A case's human labels")
    def api_annotations(run_id: str, case_id: str) -> list[dict[str, Any]]:
        def build() -> list[dict[str, Any]]:
            case = ui.ws.case(run_id, case_id)
            return [_label_dict(a) for a in ui.ws.store.annotations(case.run_id, case.id)]

        return ui.call(build)

    @app.post("/api/runs/{run_id}/cases/{case_id}/annotations", status_code=201, summary="Label a case")
    def api_annotate(run_id: str, case_id: str, label: AnnotationIn) -> dict[str, Any]:
        if label.error_type not in LABELS:
            raise HTTPException(422, f"unknown error type {label.error_type!r} (choose {', '.join(LABELS)})")

        if ui.ws.store.read_only:
            raise HTTPException(409, f"{ui.ws.path}: the workspace is read-only, so labels cannot be saved")

        def build() -> dict[str, Any]:
            case = ui.ws.case(run_id, case_id)
            op_id = (label.op_id or "").strip() or None
            if op_id is not None:
                ui.contexts.get(case.run_id).graph.op(op_id)  # an unknown operation is a 404
            stored = ui.ws.store.add_annotation(
                Annotation(
                    case.run_id,
                    case.id,
                    label.error_type,
                    op_id,
                    (label.note or "").strip() or None,
                    (label.author or "").strip() or None,
                    time.time(),
                )
            )
            return _label_dict(stored)

        return ui.call(build)

    @app.delete("/api/annotations/{annotation_id}", status_code=204, summary="Remove a label")
    def api_unannotate(annotation_id: Annotated[int, PathParam(ge=-INT64_MAX - 1, le=INT64_MAX)]) -> None:
        with ui.reading() as ws:
            if not ws.store.delete_annotation(annotation_id):
                raise HTTPException(404, f"no annotation {annotation_id}")

    # -- pages --------------------------------------------------------------------------------

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def runs_page(request: Request, replays: bool = False) -> HTMLResponse:
        return page(request, "runs.html", runs=api_runs(replays), replays=replays)

    @app.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
    def cases_page(
        request: Request,
        run_id: str,
        verdict: str | None = None,
        error_type: str | None = None,
        q: str | None = None,
    ) -> HTMLResponse:
        run = ui.call(lambda: ui.ws.run(run_id))
        rows = api_cases(run.id, verdict or None, error_type or None, q or None)
        everything = ui.call(lambda: [r.to_dict() for r in case_rows(ui.ws, run.id)])
        types = sorted({r["error_type"] for r in everything if r["error_type"]})
        return page(
            request,
            "cases.html",
            run=run,
            rows=rows,
            total=len(everything),
            types=types,
            verdict=verdict or "",
            error_type=error_type or "",
            q=q or "",
        )

    @app.get("/runs/{run_id}/cases/{case_id}", response_class=HTMLResponse, include_in_schema=False)
    def case_page(request: Request, run_id: str, case_id: str) -> HTMLResponse:
        story = api_case(run_id, case_id)
        return page(request, "case.html", story=story, timeline=_timeline_svg(story["timeline"]))

    @app.get("/runs/{run_id}/ops/{op_id}", response_class=HTMLResponse, include_in_schema=False)
    def op_page(request: Request, run_id: str, op_id: str) -> HTMLResponse:
        return page(request, "operation.html", detail=api_op(run_id, op_id))

    @app.get("/runs/{run_id}/memory", response_class=HTMLResponse, include_in_schema=False)
    def memory_page(
        request: Request, run_id: str, seq: Seq | None = None, since: Seq | None = None
    ) -> HTMLResponse:
        state = api_memory(run_id, seq)
        diff = api_memory_diff(run_id, since, state["seq"]) if since is not None else None
        return page(request, "memory.html", state=state, diff=diff, since=since)

    return app


def _label_dict(a: Annotation) -> dict[str, Any]:
    return {
        "id": a.id,
        "run_id": a.run_id,
        "case_id": a.case_id,
        "error_type": a.error_type,
        "op_id": a.op_id,
        "note": a.note,
        "author": a.author,
        "created_at": a.created_at,
    }


def _timeline_svg(timeline: dict[str, Any]) -> dict[str, Any]:
    """Coordinates for the server-drawn memory evolution timeline (one lane per unit)."""
    width, left, lane_height, top = 1100, 170, 30, 34
    span = max(1, timeline["max_seq"])

    def x(seq: int) -> float:
        return round(left + (width - left - 20) * seq / span, 1)

    lanes = []
    for i, lane in enumerate(timeline["lanes"]):
        y = top + i * lane_height + lane_height / 2
        points = [dict(change, x=x(change["seq"])) for change in lane["changes"]]
        end = points[-1]["x"] if points and points[-1]["change"] == "delete" else x(span)
        lanes.append(dict(lane, y=y, points=points, start=points[0]["x"] if points else left, end=end))
    height = top + len(lanes) * lane_height + 12
    question = timeline["question_seq"]
    return {
        "width": width,
        "height": height,
        "left": left,
        "lanes": lanes,
        "sessions": _spaced_labels([dict(s, x=x(s["seq"])) for s in timeline["sessions"]]),
        "question_x": None if question is None else x(question),
    }


def _spaced_labels(sessions: list[dict[str, Any]], gap: float = 100.0) -> list[dict[str, Any]]:
    """Mark which session lines get a date label: one every `gap` pixels, so dates never overlap."""
    last = -gap
    for session in sessions:
        session["labelled"] = session["x"] - last >= gap
        if session["labelled"]:
            last = session["x"]
    return sessions
