"""The UI's front door: only its own Host, only its own Origin for writes, and protective headers.

The UI has no login, so a page on another site must neither read it (DNS rebinding: that page's
name pointed at 127.0.0.1 still sends its own Host) nor write labels through it (a cross-site POST).
"""

from __future__ import annotations

import html
import json

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Where the UI listens unless told otherwise: this machine only.
LOOPBACK = "127.0.0.1"
#: Names of the loopback interface a browser on this machine may use in the Host header.
LOOPBACK_NAMES: tuple[str, ...] = ("127.0.0.1", "localhost", "[::1]")
#: Bind addresses meaning every interface: they name no host a browser would send.
WILDCARDS = frozenset({"", "0.0.0.0", "::"})
#: Methods that change nothing, so they need no Origin check (they are still Host checked).
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Sec-Fetch-Site values a write may carry: the UI's own pages, or the user typing it in.
OWN_FETCH_SITES = frozenset({"same-origin", "none"})
#: The pages: scripts only from /static (none inline, so none from data); nothing may frame them.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
#: FastAPI's /docs and /redoc load their viewer from a CDN with an inline starter script; they show
#: the API schema only, never workspace data.
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com; "
    "font-src https://fonts.gstatic.com; img-src 'self' data: https:; worker-src blob:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})


def security_headers(path: str) -> dict[str, str]:
    """The headers every response carries: its content policy, no sniffing, no framing."""
    return {
        "Content-Security-Policy": DOCS_POLICY if path in DOCS_PATHS else PAGE_POLICY,
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",
    }


def url_host(host: str) -> str:
    """`host` as it appears in a URL or a Host header (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_hosts(host: str, port: int) -> frozenset[str]:
    """Host header values naming this server: loopback names and `host` itself, with the port
    (a browser leaves out port 80, so the bare names then too)."""
    names = {*LOOPBACK_NAMES} | (set() if host in WILDCARDS else {url_host(host)})
    values = {f"{name.lower()}:{port}" for name in names}
    if port == 80:
        values |= {name.lower() for name in names}
    return frozenset(values)


class Guard:
    """ASGI middleware: 400 for a foreign Host, 403 for a foreign write, security headers always
    (a crash's 500 is sent outside it, so app.py's handler for it adds them itself)."""

    def __init__(self, app: ASGIApp, *, host: str, port: int) -> None:
        self.app = app
        self.hosts = allowed_hosts(host, port)
        self.origins = frozenset(f"http://{h}" for h in self.hosts)
        self.url = f"http://{LOOPBACK if host in WILDCARDS else url_host(host)}:{port}/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [(k.lower().encode(), v.encode()) for k, v in security_headers(scope["path"]).items()]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        refusal = self.refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send_with_headers)
            return
        status, problem = refusal
        api = scope["path"].startswith("/api/")
        await _reply(send_with_headers, status, problem, api=api)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """(status, reason) when the request must not reach the app, None when it may."""
        headers = Headers(scope=scope)
        hosts = headers.getlist("host")
        if len(hosts) != 1 or hosts[0].lower() not in self.hosts:
            shown = repr(hosts[0][:100]) if len(hosts) == 1 else f"{len(hosts)} Host headers"
            return 400, f"unexpected Host ({shown}): this UI answers only at {self.url}"
        if scope["method"] in SAFE_METHODS:
            return None
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return 403, f"a write from another origin ({origin[:100]!r}) is refused"
        site = headers.get("sec-fetch-site")
        if site is not None and site.lower() not in OWN_FETCH_SITES:
            return 403, f"a write from another site (Sec-Fetch-Site: {site[:40]}) is refused"
        return None


async def _reply(send: Send, status: int, problem: str, *, api: bool) -> None:
    """A refusal in the shape the caller reads: JSON for /api, a bare page (no workspace path) else."""
    if api:
        body = json.dumps({"error": problem}).encode()
        kind = b"application/json"
    else:
        text = html.escape(problem)
        body = (
            f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{status}</title></head>'
            f"<body><h1>{status}</h1><p>{text}</p></body></html>"
        ).encode()
        kind = b"text/html; charset=utf-8"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
