"""Ingestion: loaders -> chunker -> embedder -> Store, incremental by content hash.

* A document whose content hash is unchanged is skipped (no chunking, no embedding). If only its
  permissions or source path changed (policy edit, file moved), its rows are rewritten with the
  stored vectors: still no embedding.
* A changed document's chunks, vectors and lexical entries are replaced in one Store commit
  (``batch_docs`` documents per commit; with forked prepare workers, the batches ready at the
  time, up to ``COMMIT_ROWS`` chunk rows). A process killed at any point leaves every document at
  its old or its new version, never a mix (tests/test_crash.py); the next run completes the rest.
* A document whose file disappeared from the ingested folder is deleted from every index.
* A file that fails to load, or a batch whose embedding fails, is reported (one line naming the
  file) and its previously indexed version, if any, is kept as it was.
* Two sources with the same document id: the newer version wins, the other is reported as
  superseded (rule: :mod:`citewise.lifecycle`).
* Permissions: front matter, else a policy file (:mod:`citewise.policy`), else the index default.
* Whole-book copies and near-duplicates (:mod:`citewise.text.dedup`): in a folder ingest, a
  document that concatenates others (mdBook's ``print.html``) or nearly repeats another with the
  same permission groups is not indexed (removed if it was) and reported in ``duplicates``, one
  line each; the canonical documents are indexed. The check runs over every loaded document,
  changed or not, so a re-ingest of an unchanged folder skips the same copies and embeds nothing.
  ``keep_duplicates=True`` indexes them all. ``ingest_documents`` (BEIR, SQuAD) does not check.
* Every completed run is appended to the store's ingest log (for ``citewise status``).
* Answer units: given a unit splitter (``units``; the answer layer's
  :data:`citewise.answer.units.ANSWER_UNITS`, passed in because this layer may not import it),
  each chunk's answer units are embedded in the same embedding call as the chunks and stored on
  the chunk rows in the same commit, so ``ask`` does not embed sentences at query time. In the
  ``units-mean`` chunk-vector mode (:mod:`citewise.models.chunk_vectors`) a chunk's vector is
  the mean of its unit vectors, so that one pass embeds each unit once and no chunk text (only a
  chunk without units embeds its own text). A document
  whose text is unchanged but whose stored units come from another splitter version gets only its
  unit vectors recomputed (chunk vectors are reused; ``units_refreshed`` in the report).
"""

from __future__ import annotations

from citewise.ingest.report import _one_line, DEFAULT_PERMISSIONS, EmbedProgress, IngestReport, Progress  # noqa: F401
from citewise.ingest.work import _Prepared, _Work, UnitSplitter  # noqa: F401
from citewise.ingest.plan import _entry_key, _stale_title_ids, _superseded, moved_root  # noqa: F401
from citewise.ingest.embed import _unit_count, EMBED_SLICE  # noqa: F401
from citewise.ingest.write import (  # noqa: F401
    _cpu_count,
    _kill_pool,
    _prepare_forked,
    _worker_start,
    AHEAD_PER_WORKER,
    COMMIT_ROWS,
)
from citewise.ingest.ingestor import Ingestor  # noqa: F401
