"""A PgBouncer a test starts itself (Debian's `pgbouncer` binary; .ci/system-deps.sh installs it) in front of the
local PostgreSQL, in transaction pooling mode with a hard cap on server connections, on a free port of
127.0.0.1. Runs as the `postgres` account when the tests run as root (PgBouncer refuses root)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa


def binary() -> str | None:
    """The pgbouncer program, or None when it is not installed."""
    found = shutil.which("pgbouncer")
    if found:
        return found
    return "/usr/sbin/pgbouncer" if os.access("/usr/sbin/pgbouncer", os.X_OK) else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def pgbouncer(upstream: str, *, server_connections: int) -> Iterator[str]:
    """PgBouncer in front of `upstream`'s server (transaction pooling, at most `server_connections` server
    connections to any one database); yields the URL of `upstream`'s database through it. Stopped on exit."""
    program = binary()
    assert program is not None
    target = sa.make_url(upstream)
    port = _free_port()
    folder = Path(tempfile.mkdtemp(prefix="arbiter-pgbouncer-"))
    folder.chmod(0o755)
    (folder / "users.txt").write_text(f'"{target.username}" ""\n', encoding="utf-8")
    (folder / "pgbouncer.ini").write_text(
        "\n".join(
            [
                "[databases]",
                f"* = host={target.host or '127.0.0.1'} port={target.port or 5432}",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                f"listen_port = {port}",
                "unix_socket_dir =",
                "auth_type = trust",
                f"auth_file = {folder / 'users.txt'}",
                "pool_mode = transaction",
                f"default_pool_size = {server_connections}",
                f"max_db_connections = {server_connections}",
                "max_client_conn = 500",
                "server_reset_query =",
                f"logfile = {folder / 'pgbouncer.log'}",
                f"pidfile = {folder / 'pgbouncer.pid'}",
                "",
            ]
        ),
        encoding="utf-8",
    )
    command = [program, str(folder / "pgbouncer.ini")]
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres")
        for path in folder.iterdir():
            shutil.chown(path, "postgres")
        command = [program, "-u", "postgres", str(folder / "pgbouncer.ini")]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log = (
                        (folder / "pgbouncer.log").read_text(errors="replace")
                        if (folder / "pgbouncer.log").exists()
                        else ""
                    )
                    raise RuntimeError(f"pgbouncer did not start: {log[-2000:]}") from None
                time.sleep(0.05)
        yield target.set(port=port).render_as_string(hide_password=False)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


class ServerConnections:
    """Samples, on a direct connection, how many server connections the database has (the run lock's own
    session and this sampler left out) while a block runs; `peak` is the most seen at once."""

    def __init__(self, direct_url: str) -> None:
        self.engine = sa.create_engine(direct_url, poolclass=sa.pool.NullPool)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        query = sa.text(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
            "AND coalesce(application_name, '') NOT LIKE 'arbiter-run%'"
        )
        with self.engine.connect() as conn:
            while not self._stop.is_set():
                self.peak = max(self.peak, int(conn.execute(query).scalar_one()))
                conn.rollback()
                time.sleep(0.02)

    def __enter__(self) -> ServerConnections:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.engine.dispose()
