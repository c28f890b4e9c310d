"""Test suites a third-party component runs unchanged to show it conforms to a citewise contract.

* :class:`StoreConformance`: the :class:`citewise.store.base.Store` protocol (subclass it in a
  pytest module and provide a ``store`` fixture).
"""

from citewise.testing.store import StoreConformance

__all__ = ["StoreConformance"]
