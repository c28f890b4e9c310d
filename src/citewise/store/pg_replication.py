"""Replication of a PostgreSQL store, as ``citewise status`` reports it.

Read scaling: a streaming replica (a hot standby made with ``pg_basebackup -R``) serves every
read a store makes — search, ask, status — so ``citewise serve --store <replica URL>`` answers
from it while ingests go to the primary. A write on the replica is refused by the server
(``read_only_sql_transaction``), which :mod:`citewise.store.faults` turns into one line.

:func:`replication_status` (PostgreSQL "Monitoring" and "System Administration Functions"):

* on a replica (``pg_is_in_recovery()``): ``role`` ``replica``; ``lag_bytes`` = WAL received
  but not yet replayed (``pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())``);
  ``lag_s`` = 0 when everything received is replayed, else ``now() -
  pg_last_xact_replay_timestamp()`` (how old the newest replayed commit is: an idle primary
  commits nothing, so this only counts while WAL waits); ``streaming``: whether the WAL
  receiver is connected;
* on a primary: ``role`` ``primary`` and per connected standby (``pg_stat_replication``) its
  name, state, ``lag_bytes`` (current WAL position minus its replay position) and ``lag_s``
  (``replay_lag``; 0 when the server has not measured one, i.e. nothing to replay).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type-only: the store imports this module when asked
    from citewise.store.postgres import PostgresStore


def replication_status(store: PostgresStore) -> dict[str, Any]:
    """The replication role and lag of the server behind ``store`` (module docstring)."""
    with store._tx(snapshot=False) as cur:
        if cur.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
            lag_bytes, lag_s = cur.execute(
                "SELECT coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0), "
                "CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0 "
                "ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0) END"
            ).fetchone()
            streaming = cur.execute("SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming'").fetchone()[
                0
            ]
            return {
                "role": "replica",
                "lag_bytes": int(lag_bytes),
                "lag_s": round(float(lag_s), 3),
                "streaming": bool(streaming),
            }
        rows = cur.execute(
            "SELECT application_name, state, coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), 0), "
            "coalesce(extract(epoch FROM replay_lag), 0) FROM pg_stat_replication ORDER BY application_name, pid"
        ).fetchall()
    return {
        "role": "primary",
        "replicas": [{"name": n, "state": s, "lag_bytes": int(b), "lag_s": round(float(t), 3)} for n, s, b, t in rows],
    }


def replication_line(rep: dict[str, Any] | None) -> str | None:
    """One line for ``citewise status`` (None for a store without replication)."""
    if not rep:
        return None
    if rep["role"] == "replica":
        state = "streaming from the primary" if rep["streaming"] else "NOT connected to the primary"
        return (
            f"Replication: this store is a read-only replica, {state}; replay lag {rep['lag_s']:.1f}s "
            f"({rep['lag_bytes']:,} bytes of WAL not yet replayed)."
        )
    if not rep["replicas"]:
        return "Replication: primary, no replica connected."
    parts = [f"{r['name']} {r['state']}, lag {r['lag_s']:.1f}s ({r['lag_bytes']:,} bytes)" for r in rep["replicas"]]
    return f"Replication: primary with {len(parts)} replica(s): " + "; ".join(parts) + "."
