"""A real `movegate serve` for the tests: its own database on the throwaway
PostgreSQL of scripts/with-pg.sh (MG_DATABASE_URL), migrated by `movegate
migrate`, templates loaded by `movegate templates load`, an API keys file,
free ports, and /healthz awaited with a generous deadline."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def movegate_binary() -> str:
    path = os.environ.get("MG_MOVEGATE_BIN") or os.path.join(SOURCE_DIR, "build", "movegate")
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"no movegate binary at {path} (build first, or set MG_MOVEGATE_BIN)")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _psql() -> str:
    pg_bin = os.environ.get("MG_PG_BIN", "")
    candidate = os.path.join(pg_bin, "psql") if pg_bin else ""
    return candidate if candidate and os.access(candidate, os.X_OK) else "psql"


def _admin_url() -> str:
    url = os.environ.get("MG_DATABASE_URL")
    if not url:
        raise RuntimeError("MG_DATABASE_URL is not set: run through scripts/with-pg.sh")
    return url


def _url_for(url: str, dbname: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + dbname))


class Serve:
    """One `movegate serve` process on a fresh database.

    keys: {key_id: (secret, [scopes])}; templates: plans (dicts) to load;
    env: extra MG_* settings.
    """

    def __init__(self, name: str, keys: dict, templates: list[dict], env: dict | None = None):
        self.name = name
        self.keys = keys
        self.templates = templates
        self.extra_env = env or {}
        self.dbname = f"mg_py_{name}_{uuid.uuid4().hex[:10]}"
        self.db_url = _url_for(_admin_url(), self.dbname)
        self.dir = tempfile.mkdtemp(prefix=f"mg-py-{name}-")
        self.api_port = 0
        self.admin_port = 0
        self.process: subprocess.Popen | None = None
        self.log_path = os.path.join(self.dir, "serve.log")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    def _run(self, args: list[str], env: dict) -> None:
        done = subprocess.run(args, env=env, capture_output=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{args} failed: {done.stdout!r} {done.stderr!r}")

    def _env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MG_")}
        env.update(
            MG_DATABASE_URL=self.db_url,
            MG_RUNTIME_NODE=f"py-{self.name}",
            MG_LOG_LEVEL="info",
        )
        return env

    def start(self) -> "Serve":
        self._run([_psql(), "-q", _admin_url(), "-c", f"CREATE DATABASE {self.dbname}"], os.environ)
        env = self._env()
        self._run([movegate_binary(), "migrate"], env)
        if self.templates:
            tdir = os.path.join(self.dir, "templates")
            os.mkdir(tdir)
            for i, plan in enumerate(self.templates):
                with open(os.path.join(tdir, f"{i:02d}.json"), "w") as f:
                    json.dump(plan, f)
            self._run([movegate_binary(), "templates", "load", tdir], env)
        keys_path = os.path.join(self.dir, "keys.json")
        with open(keys_path, "w") as f:
            json.dump(
                {"keys": [{"key_id": k, "secret": s, "scopes": sc} for k, (s, sc) in self.keys.items()]},
                f,
            )
        self.api_port, self.admin_port = free_port(), free_port()
        env.update(
            MG_HTTP_ADDR=f"127.0.0.1:{self.api_port}",
            MG_ADMIN_ADDR=f"127.0.0.1:{self.admin_port}",
            MG_ADMIN_TOKEN="py-admin-token-0123456789",
            MG_API_KEYS_FILE=keys_path,
            MG_CLUSTER_ADDR="127.0.0.1:0",
        )
        env.update(self.extra_env)
        log = open(self.log_path, "wb")
        self.process = subprocess.Popen([movegate_binary(), "serve"], env=env, stdout=log, stderr=log)
        log.close()
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        # A loaded machine starts serve far slower than an idle one.
        deadline = time.monotonic() + 90
        url = f"http://127.0.0.1:{self.admin_port}/healthz"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"movegate serve exited early:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"movegate serve did not answer /healthz:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-lines:]).decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        try:
            self._run(
                [_psql(), "-q", _admin_url(), "-c", f"DROP DATABASE IF EXISTS {self.dbname} WITH (FORCE)"],
                os.environ,
            )
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
