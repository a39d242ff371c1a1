"""``torch-tutor serve``: the app in a browser, one app process per tab (textual-serve).

textual-serve's :class:`~textual_serve.server.Server` starts the command it is given once per
websocket, that is once per browser tab, with ``TEXTUAL_DRIVER`` set to Textual's web driver, and
relays the tab's keys and the app's screen. What this module adds to it:

* **The door.** Every request (the page, its static files, the websocket) needs the access token:
  the printed address carries it once (``?token=``); the server answers with a cookie (HttpOnly,
  SameSite=Strict) and a redirect to the same page without it, so the token leaves the address bar
  and the browser's history at once. The websocket is accepted only with that cookie and only from
  a page of the same origin (its Origin header names the Host it asked), so another site open in
  the browser cannot drive the tutor. Behind a Jupyter server (``--unix-socket``) the Jupyter
  server is the door: it authenticates its user, and the socket lives in a folder only that user
  can open.
* **Nothing in the logs.** aiohttp's access log (which would write every address, the token's too)
  is off; the token is printed once, on standard output, and never reaches the app processes (not
  in their command line, not in their environment).
* **Relative addresses.** textual-serve's own page builds absolute addresses from ``public_url``;
  this page's are relative, so it works unchanged at ``/`` and behind a proxy's prefix.
* **The browser's keys.** Each app process gets ``TORCH_TUTOR_BROWSER=1``, and the app shows and
  binds a browser-safe key where a browser keeps the terminal's key (``tutor/app/keys.py``).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import os
import secrets
import shlex
import signal
import socket
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TextIO

from tutor.errors import TutorError

if TYPE_CHECKING:
    from aiohttp import web

#: The environment variable each app process is started with; tutor/app/keys.py reads it.
BROWSER_ENV = "TORCH_TUTOR_BROWSER"
#: The query parameter of the printed address.
TOKEN_PARAM = "token"
TEMPLATES = Path(__file__).with_name("templates")
DEFAULT_PORT = 8765


#: What the server says on the terminal, in English: `torch-tutor serve` passes them in the
#: learner's language (the table's ``serve.*`` keys, kept equal to these by a test), since this
#: module cannot import the table (tutor.web imports only the standard library and its server).
WORDS = {
    "cannot_listen_path": "cannot listen on {path}: {error}",
    "cannot_listen": "cannot listen on {host} port {port}: {error} (pick another with --port N, or --port 0 for any "
                     "free one)",
    "serving_socket": "torch-tutor is serving on {address} (open it through the Jupyter server's launcher)",
    "serving_token": "torch-tutor is serving. Open this address in a browser (it holds the access token: keep it to "
                     "yourself):",
    "serving_token_many": "torch-tutor is serving on every address of this machine. Open one of these in a browser "
                          "(each holds the access token: keep them to yourself):",
    "this_machine": "(from this machine only)",
    "no_address": "(this machine's other addresses could not be read: use its name or address in place of {host})",
    "serving": "torch-tutor is serving on {address}",
    "tabs": "Each tab is its own tutor, on your data folder. Press Ctrl+C here to stop.",
    "stopping": "torch-tutor serve: stopping (each open tab's tutor saves and quits)",
    # the door's answers, which a browser shows as the page
    "not_here": "torch-tutor: this address is not served here.",
    "not_this_page": "torch-tutor: not from this page.",
    "needs_token": "torch-tutor: this page needs its access token. Open the address that `torch-tutor serve` printed "
                   "when it started (it ends in ?token=...).",
    # the page (templates/app_index.html)
    "page_starting": "torch-tutor is starting…",
    "page_ended": "This session of torch-tutor has ended. Your progress and your code are saved.",
    "page_restart": "Start again",
    "page_start": "Start",
}


class ServeError(TutorError):
    """The server cannot start as asked; the message says why and what to do (a usage error)."""


def is_loopback(host: str) -> bool:
    """True when ``host`` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    if host.strip("[]").lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        pass
    try:  # a name: loopback only when every address it has is
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {str(info[4][0]) for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses)


def app_command(argv: list[str]) -> str:
    """The shell command textual-serve runs for each tab: this interpreter, ``-m tutor`` and
    ``argv`` (textual-serve runs it through a shell, so every word is quoted)."""
    return shlex.join([sys.executable, "-m", "tutor", *argv])


@dataclass
class Door:
    """Who may in. ``token`` None: no token (behind a Jupyter server's own authentication)."""

    token: str | None
    cookie: str = "torch_tutor_token"
    #: Host names the page may be asked for without a token (a browser on this machine); None: any.
    hosts: set[str] | None = field(default=None)

    def token_ok(self, given: str | None) -> bool:
        return self.token is None or (given is not None and hmac.compare_digest(given.encode(), self.token.encode()))


def _host_name(value: str) -> str:
    """``host`` of a ``host[:port]`` header value (``[::1]:80`` -> ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _same_origin(origin: str | None, host: str | None) -> bool:
    """The websocket's Origin names the host:port the request was sent to (a page of ours)."""
    if not origin or not host:
        return False
    from urllib.parse import urlsplit

    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    return parts.netloc.lower() == host.strip().lower()


def make_server(command: str, door: Door, *, title: str = "torch-tutor", words: dict[str, str] | None = None,
                language: str = "en") -> Any:
    """A textual-serve Server for ``command`` behind ``door`` (textual-serve is imported here:
    only ``serve`` needs it); ``words``: :data:`WORDS` in ``language``, the page's and the door's."""
    say = {**WORDS, **(words or {})}
    from aiohttp import web
    from textual_serve.server import Server

    class TutorServer(Server):
        async def _make_app(self) -> web.Application:
            app = web.Application(middlewares=[self._door])
            import aiohttp_jinja2
            import jinja2

            aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(str(TEMPLATES)))
            app.add_routes([
                web.get("/", self.handle_index, name="index"),
                web.get("/ws", self.handle_websocket, name="websocket"),
                web.static("/static", self.statics_path, name="static"),
            ])
            return app

        @web.middleware
        async def _door(self, request: web.Request,
                        handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
            if door.hosts is not None and _host_name(request.host) not in door.hosts:
                # A name that is not this machine's: a page that rebound its own name to 127.0.0.1.
                return web.Response(status=421, text=say["not_here"] + "\n")
            given = request.query.get(TOKEN_PARAM)
            if given is not None:
                if not door.token_ok(given):
                    return _refused(say)
                # Into a cookie, out of the address bar: back to the page, relative so that it is
                # right behind any proxy too, and never built from the path (`\\evil.example`
                # would be another site's address).
                query = {k: v for k, v in request.query.items() if k != TOKEN_PARAM}
                location = "./"
                if query:
                    from urllib.parse import urlencode

                    location += "?" + urlencode(query)
                moved = web.HTTPSeeOther(location=location)
                if door.token is not None:
                    moved.set_cookie(door.cookie, door.token, httponly=True, samesite="Strict", path="/")
                return moved
            if not door.token_ok(request.cookies.get(door.cookie)):
                return _refused(say)
            if request.path.endswith("/ws") and not _same_origin(request.headers.get("Origin"), request.host):
                return web.Response(status=403, text=say["not_this_page"] + "\n")
            response = await handler(request)
            response.headers.setdefault("Referrer-Policy", "no-referrer")
            response.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
            response.headers.setdefault("Cache-Control", "no-store")
            return response

        @aiohttp_template("app_index.html")
        async def handle_index(self, request: web.Request) -> dict[str, Any]:
            try:
                font_size = max(8, min(48, int(request.query.get("fontsize", "16"))))
            except ValueError:
                font_size = 16
            return {"font_size": font_size, "lang": language,
                    **{key: text for key, text in say.items() if key.startswith("page_")}}

        async def on_startup(self, app: web.Application) -> None:  # textual-serve prints its URL
            pass

    return TutorServer(command, title=title)


def aiohttp_template(name: str) -> Callable[..., Any]:
    import aiohttp_jinja2

    return aiohttp_jinja2.template(name)


def _refused(say: dict[str, str]) -> web.Response:
    from aiohttp import web

    return web.Response(status=403, content_type="text/plain", text=say["needs_token"] + "\n")


@dataclass
class Listening:
    """Where the server listens: a TCP ``host``/``port`` or a Unix socket ``path``."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    path: str | None = None


def serve(command: str, where: Listening, *, token: bool = True, out: TextIO | None = None,
          ready: Callable[[str], None] | None = None, words: dict[str, str] | None = None,
          language: str = "en") -> int:
    """Serve ``command`` (see :func:`app_command`) until SIGINT or SIGTERM; returns the exit code.

    ``token`` False only behind another server's authentication (``where.path``, a Unix socket).
    The address to open is printed once on ``out`` (standard output); ``words``: :data:`WORDS` in
    ``language`` (a language code: the page's ``lang``), which the terminal and the page say."""
    out = out or sys.stdout
    logging.basicConfig(level=logging.WARNING, format="torch-tutor serve: %(message)s")
    logging.getLogger("aiohttp.access").disabled = True
    os.environ[BROWSER_ENV] = "1"  # inherited by each tab's app process (textual-serve copies os.environ)
    secret = secrets.token_urlsafe(24) if token else None
    hosts = None
    if where.path is None and is_loopback(where.host):
        hosts = {"localhost", "127.0.0.1", "::1", where.host.strip("[]").lower()}
    # A cookie name of this server's own: two servers on one host (other ports) keep theirs apart.
    door = Door(token=secret, cookie=f"torch_tutor_{secrets.token_hex(4)}", hosts=hosts)
    say = {**WORDS, **(words or {})}
    server = make_server(command, door, words=say, language=language)
    return asyncio.run(_run(server, where, door, out, ready, say))


async def _run(server: Any, where: Listening, door: Door, out: TextIO,
               ready: Callable[[str], None] | None, words: dict[str, str]) -> int:
    from aiohttp import web

    app = await server._make_app()
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=10)
    await runner.setup()
    try:
        if where.path is not None:
            # Bound here, not by asyncio's create_unix_server, which removes whatever socket file
            # is at the path first, another program's live one too; only a dead one goes here.
            _free_stale_socket(where.path)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                listener.bind(where.path)
            except OSError:
                listener.close()
                raise
            site: web.BaseSite = web.SockSite(runner, listener)
        else:
            site = web.TCPSite(runner, where.host, where.port, reuse_address=True)
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        if where.path is not None:
            raise ServeError(words["cannot_listen_path"].format(path=where.path, error=exc.strerror or exc)) from None
        raise ServeError(words["cannot_listen"].format(host=where.host, port=where.port,
                                                       error=exc.strerror or exc)) from None
    bound = _socket_id(where.path) if where.path is not None else None
    if where.path is not None:
        address = f"unix:{where.path}"
        out.write(words["serving_socket"].format(address=address) + "\n")
    else:
        port = runner.addresses[0][1]
        hosts = reachable_hosts(where.host)
        address = _url(hosts[0], port)
        query = f"?{TOKEN_PARAM}={door.token}" if door.token is not None else ""
        if len(hosts) > 1 or hosts[0] != where.host:  # 0.0.0.0 or ::: the addresses that reach it
            out.write(words["serving_token_many"] + "\n\n")  # a TCP address always has a token
            for host in hosts:
                note = "   " + words["this_machine"] if is_loopback(host) else ""
                out.write(f"    {_url(host, port)}{query}{note}\n")
            if all(is_loopback(host) for host in hosts):
                out.write("    " + words["no_address"].format(host=where.host) + "\n")
            out.write("\n")
        elif door.token is not None:
            out.write(words["serving_token"] + f"\n\n    {address}{query}\n\n")
        else:
            out.write(words["serving"].format(address=address) + "\n")
        out.write(words["tabs"] + "\n")
    out.flush()
    if ready is not None:
        ready(address)
    stop = asyncio.Event()
    stopped_by: list[int] = []
    loop = asyncio.get_running_loop()

    def stop_on(number: int) -> None:
        stopped_by.append(number)
        stop.set()

    for number in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if number is None:  # pragma: no cover - Windows has no SIGHUP
            continue
        try:
            loop.add_signal_handler(number, stop_on, int(number))
        except (NotImplementedError, RuntimeError):  # pragma: no cover - Windows
            pass
    try:
        await stop.wait()
    finally:
        out.write(words["stopping"] + "\n")
        out.flush()
        await runner.cleanup()
        if where.path is not None and bound is not None and _socket_id(where.path) == bound:
            os.unlink(where.path)  # ours, still: a later start listens there again
    # Ctrl+C is how a terminal's user stops it: 0. Stopped by SIGTERM (jupyter-server-proxy's
    # supervisor, a hub's culler, `kill`) or SIGHUP: 128 + the signal, as a shell reports a process
    # the signal ended. jupyter-server-proxy starts again only a process that exited non-zero: with
    # 0 the launcher's tile answered HTTP 500 until the user's whole server restarted.
    return 0 if not stopped_by or stopped_by[0] == signal.SIGINT else 128 + stopped_by[0]


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def _socket_id(path: str) -> tuple[int, int] | None:
    """The socket file at ``path`` as (device, inode); None when there is no socket there."""
    import stat

    try:
        found = os.lstat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISSOCK(found.st_mode) else None


def _free_stale_socket(path: str) -> None:
    """Remove a socket file at ``path`` that nothing listens on any more: a tutor killed outright
    (SIGKILL, the machine's OOM killer) runs no clean-up, and its file would refuse the next start
    ("address already in use"). A socket something answers on, or anything that is not a socket
    (a file, a link), stays: listening then fails and says so."""
    if _socket_id(path) is None:
        return
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(2)
        probe.connect(path)
    except ConnectionRefusedError:  # a socket file with no listener behind it
        try:
            os.unlink(path)
        except OSError:
            pass
    except OSError:
        pass
    finally:
        probe.close()


def reachable_hosts(host: str) -> list[str]:
    """The addresses a browser can use for a server listening on ``host``: ``host`` itself, or for
    the unspecified address (0.0.0.0, ::), which no browser can open, loopback first and then this
    machine's own addresses of that family (from its interfaces, its name, and the address its
    outgoing traffic would leave from)."""
    bare = host.strip("[]")
    try:
        unspecified = ipaddress.ip_address(bare).is_unspecified
    except ValueError:
        unspecified = False
    if not unspecified:
        return [host]
    six = ":" in bare
    family = socket.AF_INET6 if six else socket.AF_INET
    found: list[str] = []

    def add(address: str) -> None:
        address = address.split("%")[0]
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            return
        if (parsed.version == 6) != six or parsed.is_unspecified or parsed.is_loopback or parsed.is_link_local \
                or address in found:
            return
        found.append(address)

    for address in _interface_addresses(family):
        add(address)
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, family):
            add(str(info[4][0]))
    except OSError:
        pass
    probe = socket.socket(family, socket.SOCK_DGRAM)
    try:  # no packet is sent: connecting a UDP socket only picks the route's source address
        probe.connect(("2001:db8::1" if six else "192.0.2.1", 9))
        add(str(probe.getsockname()[0]))
    except OSError:
        pass
    finally:
        probe.close()
    return ["::1" if six else "127.0.0.1", *found]


def _interface_addresses(family: int) -> list[str]:
    """This machine's interface addresses of ``family`` where the OS says them without a library:
    Linux's /proc for IPv6, and each interface's IPv4 address (SIOCGIFADDR); [] elsewhere."""
    found: list[str] = []
    if not sys.platform.startswith("linux"):
        return found
    if family == socket.AF_INET6:
        try:
            for line in Path("/proc/net/if_inet6").read_text().splitlines():
                raw = line.split()[0]
                found.append(str(ipaddress.IPv6Address(int(raw, 16))))
        except (OSError, ValueError, IndexError):
            pass
        return found
    import fcntl
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            names = [name for _, name in socket.if_nameindex()]
        except OSError:
            return found
        for name in names:
            try:
                answer = fcntl.ioctl(probe.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
            except OSError:  # an interface with no IPv4 address
                continue
            found.append(socket.inet_ntoa(answer[20:24]))
    return found
