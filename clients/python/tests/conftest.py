"""A real ``airlock serve`` per test session (and one more for the restart test): a free loopback
port, a fresh SQLite file in a temporary directory, a fixed admin token, and agent and reviewer
tokens minted through the API.

The server command is ``node <repo>/dist/src/cli/main.js`` (after ``npm ci && npm run build``);
``AIRLOCK_SERVE_CMD`` replaces it (e.g. ``node --import tsx src/cli/main.ts`` run from the repo)."""

from __future__ import annotations

import os
import secrets
import shlex
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[3]
START_TIMEOUT_S = 30.0
TRUST_THRESHOLD = 3


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_command() -> list[str]:
    custom = os.environ.get("AIRLOCK_SERVE_CMD")
    if custom:
        return shlex.split(custom)
    main = REPO / "dist" / "src" / "cli" / "main.js"
    if not main.exists():
        raise RuntimeError(
            f"{main.relative_to(REPO)} is missing: run `npm ci && npm run build` first "
            "(or set AIRLOCK_SERVE_CMD)"
        )
    return ["node", str(main)]


@dataclass
class Tokens:
    admin: str
    agent: str
    alice: str
    bob: str
    #: An app backend's token (mints approval-card tokens).
    app: str


class Server:
    """One ``airlock serve`` process on a fixed port and database, which may be stopped and
    started again (the restart test)."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.db = workdir / "airlock.db"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.admin_token = "adm_" + secrets.token_urlsafe(24)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = open(self.workdir / f"serve-{self.starts}.log", "wb")
        env = {**os.environ, "AIRLOCK_ADMIN_TOKEN": self.admin_token, "AIRLOCK_LOG_LEVEL": "warn"}
        cmd = serve_command() + [
            "serve",
            "--db",
            str(self.db),
            "--port",
            str(self.port),
            "--host",
            "127.0.0.1",
            "--rate-limit",
            "off",
            # Learned trust suggests a rule after 3 approvals in a row (20 by default).
            "--trust-threshold",
            str(TRUST_THRESHOLD),
        ]
        self.proc = subprocess.Popen(
            cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        log.close()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"airlock serve exited with {self.proc.returncode}: {self.log()}"
                )
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"airlock serve did not answer within {START_TIMEOUT_S} s: {self.log()}")

    def kill(self) -> None:
        """Stops the process at once (SIGKILL): what a crash looks like to clients."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def log(self) -> str:
        path = self.workdir / f"serve-{self.starts}.log"
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def mint(self, name: str, role: str) -> str:
        res = httpx.post(
            f"{self.url}/v1/tokens",
            json={"name": name, "roles": [role]},
            headers={"authorization": f"Bearer {self.admin_token}"},
            timeout=10,
        )
        res.raise_for_status()
        return str(res.json()["token"])

    def tokens(self) -> Tokens:
        return Tokens(
            admin=self.admin_token,
            agent=self.mint("bot", "agent"),
            alice=self.mint("alice", "reviewer"),
            bob=self.mint("bob", "reviewer"),
            app=self.mint("chat-app", "app"),
        )


def started(tmp: Path) -> Iterator[Server]:
    server = Server(tmp)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    yield from started(tmp_path_factory.mktemp("airlock"))


@pytest.fixture(scope="session")
def tokens(server: Server) -> Tokens:
    return server.tokens()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own, which the test may kill and start again."""
    yield from started(tmp_path)


def unique(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(4)}"
