"""The importable conformance suite (:class:`citewise.testing.StoreConformance`) run unchanged
against both shipped backends, as a third backend would run it."""

from __future__ import annotations

import pytest

from citewise.store.lance import LanceStore
from citewise.store.postgres import PostgresStore
from citewise.testing import StoreConformance

pytestmark = pytest.mark.conformance


class TestLanceStore(StoreConformance):
    @pytest.fixture
    def store(self, tmp_path):
        return LanceStore(tmp_path / "lance", self.DIM)


class TestPostgresStore(StoreConformance):
    @pytest.fixture
    def store(self, pg_url):
        s = PostgresStore(pg_url, self.DIM)
        yield s
        s.close()
