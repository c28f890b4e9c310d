-- Ledgerly sample system of record (fictional), consistent with the sample help centre:
-- plans Starter / Pro / Enterprise with daily outgoing-payment limits 5,000 / 25,000 / 250,000 USD
-- per workspace per UTC day (help/billing/daily-transaction-limits). Amounts are USD; timestamps UTC.
-- citewise builds a SQLite database from this script (citewise.tools.records.build_sample_db);
-- it is the only source of the .db file, so the database is reproducible byte for byte.
-- `api_keys` is deliberately OFF every tool allowlist: tests check it never leaks.

CREATE TABLE customers (
  customer_id TEXT PRIMARY KEY,          -- C-1001
  name TEXT NOT NULL,
  plan TEXT NOT NULL CHECK (plan IN ('Starter', 'Pro', 'Enterprise')),
  country TEXT NOT NULL,
  signed_up_on TEXT NOT NULL,            -- YYYY-MM-DD
  verified_on TEXT NOT NULL              -- business verification date
);
CREATE TABLE contracts (
  contract_id TEXT PRIMARY KEY,          -- K-3001
  customer_id TEXT NOT NULL REFERENCES customers(customer_id),
  plan TEXT NOT NULL,
  billing TEXT NOT NULL CHECK (billing IN ('monthly', 'annual')),
  start_on TEXT NOT NULL,
  end_on TEXT NOT NULL,
  seats INTEGER NOT NULL,
  annual_value_usd REAL NOT NULL
);
CREATE TABLE invoices (
  invoice_id INTEGER PRIMARY KEY,        -- 2001..
  customer_id TEXT NOT NULL REFERENCES customers(customer_id),
  issued_on TEXT NOT NULL,
  due_on TEXT NOT NULL,
  amount_usd REAL NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('paid', 'open', 'past_due', 'refunded', 'partially_refunded', 'disputed'))
);
CREATE TABLE transactions (
  txn_id TEXT PRIMARY KEY,               -- T-500001
  customer_id TEXT NOT NULL REFERENCES customers(customer_id),
  created_at TEXT NOT NULL,              -- ISO 8601 UTC, initiation time
  direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
  kind TEXT NOT NULL CHECK (kind IN ('incoming_payment', 'bill_pay', 'customer_refund', 'withdrawal', 'tax_payment', 'internal_transfer')),
  amount_usd REAL NOT NULL,              -- converted to USD at initiation
  status TEXT NOT NULL CHECK (status IN ('initiated', 'settled', 'cancelled', 'returned'))
);
CREATE TABLE api_keys (
  key_id TEXT PRIMARY KEY,
  customer_id TEXT NOT NULL,
  secret TEXT NOT NULL
);

INSERT INTO customers VALUES
  ('C-1001', 'Northwind Bakery', 'Pro', 'US', '2024-03-02', '2024-03-05'),
  ('C-1002', 'Blue Heron Studio', 'Starter', 'US', '2025-01-10', '2025-01-12'),
  ('C-1003', 'Atlas Freight GmbH', 'Enterprise', 'DE', '2023-06-19', '2023-06-26'),
  ('C-1004', 'Meridian Health Group', 'Enterprise', 'US', '2022-11-01', '2022-11-08'),
  ('C-1005', 'Kestrel Design Co', 'Pro', 'GB', '2024-08-14', '2024-08-16'),
  ('C-1006', 'Orchard Lane Dental', 'Pro', 'CA', '2025-02-20', '2025-02-24'),
  ('C-1007', 'Tidewater Books', 'Starter', 'US', '2025-05-03', '2025-05-04'),
  ('C-1008', 'Granite Peak Outfitters', 'Pro', 'US', '2024-01-22', '2024-01-25'),
  ('C-1009', 'Little Fern Florist', 'Starter', 'AU', '2025-09-09', '2025-09-11'),
  ('C-1010', 'Copperline Logistics', 'Enterprise', 'US', '2023-02-13', '2023-02-20'),
  ('C-1011', 'Sable & Co Architects', 'Pro', 'GB', '2024-10-30', '2024-11-02'),
  ('C-1012', 'Riverbend Yoga', 'Starter', 'US', '2026-01-15', '2026-01-16'),
  ('C-1013', 'Harbor Light Ceramics', 'Starter', 'US', '2026-11-09', '2026-11-10');  -- a new account: reduced limit until 2026-12-10
INSERT INTO contracts VALUES
  ('K-3001', 'C-1001', 'Pro', 'annual', '2026-01-01', '2027-01-01', 10, 990.00),
  ('K-3002', 'C-1002', 'Starter', 'annual', '2026-02-04', '2027-02-04', 4, 290.00),
  ('K-3003', 'C-1003', 'Enterprise', 'annual', '2026-03-07', '2027-03-07', 45, 14388.00),
  ('K-3004', 'C-1004', 'Enterprise', 'annual', '2026-04-10', '2027-04-10', 55, 16788.00),
  ('K-3005', 'C-1005', 'Pro', 'annual', '2026-05-13', '2027-05-13', 18, 2142.00),
  ('K-3006', 'C-1006', 'Pro', 'annual', '2026-06-16', '2027-06-16', 20, 2430.00),
  ('K-3007', 'C-1007', 'Starter', 'annual', '2026-07-19', '2027-07-19', 3, 290.00),
  ('K-3008', 'C-1008', 'Pro', 'annual', '2026-08-22', '2027-08-22', 24, 3006.00),
  ('K-3009', 'C-1009', 'Starter', 'annual', '2026-09-25', '2027-09-25', 5, 290.00),
  ('K-3010', 'C-1010', 'Enterprise', 'annual', '2026-10-28', '2027-10-28', 115, 31188.00),
  ('K-3011', 'C-1011', 'Pro', 'annual', '2026-11-03', '2027-11-03', 30, 3870.00),
  ('K-3012', 'C-1012', 'Starter', 'annual', '2026-12-06', '2027-12-06', 5, 290.00);
INSERT INTO invoices VALUES
  (2001, 'C-1008', '2025-10-17', '2025-11-17', 999.00, 'partially_refunded'),
  (2002, 'C-1004', '2025-12-05', '2026-01-05', 990.00, 'open'),
  (2003, 'C-1003', '2025-03-10', '2025-04-10', 111.00, 'paid'),
  (2004, 'C-1006', '2025-03-19', '2025-04-19', 1224.00, 'paid'),
  (2005, 'C-1002', '2025-05-02', '2025-06-02', 65.50, 'paid'),
  (2006, 'C-1010', '2025-07-12', '2025-08-12', 302.00, 'partially_refunded'),
  (2007, 'C-1006', '2025-06-01', '2025-07-01', 9612.00, 'past_due'),
  (2008, 'C-1004', '2025-06-08', '2025-07-08', 1002.00, 'paid'),
  (2009, 'C-1012', '2025-07-12', '2025-08-12', 53.00, 'past_due'),
  (2010, 'C-1009', '2025-06-27', '2025-07-27', 1002.00, 'open'),
  (2011, 'C-1007', '2025-05-13', '2025-06-13', 1209.00, 'paid'),
  (2012, 'C-1012', '2025-10-24', '2025-11-24', 990.00, 'past_due'),
  (2013, 'C-1005', '2025-11-04', '2025-12-04', 123.00, 'paid'),
  (2014, 'C-1002', '2025-03-28', '2025-04-28', 9597.00, 'paid'),
  (2015, 'C-1012', '2025-06-14', '2025-07-14', 99.00, 'paid'),
  (2016, 'C-1008', '2025-05-01', '2025-06-01', 326.50, 'paid'),
  (2017, 'C-1001', '2025-09-03', '2025-10-03', 990.00, 'paid'),
  (2018, 'C-1007', '2025-04-24', '2025-05-24', 9612.00, 'paid'),
  (2019, 'C-1001', '2025-06-18', '2025-07-18', 29.00, 'paid'),
  (2020, 'C-1001', '2025-06-01', '2025-07-01', 99.00, 'past_due'),
  (2021, 'C-1001', '2025-08-18', '2025-09-18', 9600.00, 'refunded'),
  (2022, 'C-1005', '2025-09-28', '2025-10-28', 811.00, 'past_due'),
  (2023, 'C-1012', '2025-06-11', '2025-07-11', 811.00, 'paid'),
  (2024, 'C-1002', '2025-09-04', '2025-10-04', 38.00, 'open'),
  (2025, 'C-1008', '2025-04-22', '2025-05-22', 290.00, 'disputed'),
  (2026, 'C-1001', '2025-10-25', '2025-11-25', 1209.00, 'open'),
  (2027, 'C-1011', '2025-07-10', '2025-08-10', 9624.50, 'past_due'),
  (2028, 'C-1006', '2025-05-15', '2025-06-15', 53.00, 'refunded'),
  (2029, 'C-1007', '2025-07-10', '2025-08-10', 9624.50, 'open'),
  (2030, 'C-1003', '2025-04-10', '2025-05-10', 1200.00, 'disputed'),
  (2031, 'C-1009', '2026-06-21', '2026-07-21', 135.50, 'paid'),
  (2032, 'C-1001', '2026-09-14', '2026-10-14', 99.00, 'past_due'),
  (2033, 'C-1005', '2026-03-20', '2026-04-20', 990.00, 'partially_refunded'),
  (2034, 'C-1008', '2026-03-22', '2026-04-22', 9588.00, 'open'),
  (2035, 'C-1011', '2026-07-04', '2026-08-04', 53.00, 'disputed'),
  (2036, 'C-1006', '2026-11-24', '2026-12-24', 990.00, 'paid'),
  (2037, 'C-1011', '2026-10-04', '2026-11-04', 1200.00, 'paid'),
  (2038, 'C-1003', '2026-05-28', '2026-06-28', 326.50, 'open'),
  (2039, 'C-1003', '2026-07-08', '2026-08-08', 823.00, 'paid'),
  (2040, 'C-1011', '2026-11-13', '2026-12-13', 1209.00, 'past_due'),
  (2041, 'C-1002', '2026-10-15', '2026-11-14', 290.00, 'past_due'),
  (2042, 'C-1003', '2026-02-27', '2026-03-27', 99.00, 'disputed'),
  (2043, 'C-1010', '2026-02-16', '2026-03-16', 41.00, 'paid'),
  (2044, 'C-1011', '2026-03-21', '2026-04-21', 811.00, 'paid'),
  (2045, 'C-1007', '2026-08-23', '2026-09-23', 41.00, 'past_due'),
  (2046, 'C-1006', '2026-02-10', '2026-03-10', 53.00, 'paid'),
  (2047, 'C-1001', '2026-07-18', '2026-08-18', 823.00, 'partially_refunded'),
  (2048, 'C-1010', '2026-08-11', '2026-09-11', 823.00, 'refunded'),
  (2049, 'C-1006', '2026-11-01', '2026-12-01', 1002.00, 'open'),
  (2050, 'C-1005', '2026-04-05', '2026-05-05', 38.00, 'paid'),
  (2051, 'C-1009', '2026-01-24', '2026-02-24', 65.50, 'refunded'),
  (2052, 'C-1008', '2026-06-17', '2026-07-17', 1002.00, 'paid'),
  (2053, 'C-1001', '2026-05-20', '2026-06-20', 9588.00, 'disputed'),
  (2054, 'C-1010', '2026-05-07', '2026-06-07', 1200.00, 'paid'),
  (2055, 'C-1011', '2026-03-19', '2026-04-19', 99.00, 'past_due'),
  (2056, 'C-1010', '2026-07-16', '2026-08-16', 990.00, 'partially_refunded'),
  (2057, 'C-1009', '2026-11-16', '2026-12-16', 65.50, 'partially_refunded'),
  (2058, 'C-1005', '2026-01-09', '2026-02-09', 41.00, 'open'),
  (2059, 'C-1008', '2026-01-11', '2026-02-11', 1209.00, 'refunded'),
  (2060, 'C-1008', '2026-08-23', '2026-09-23', 299.00, 'partially_refunded');
INSERT INTO transactions VALUES
  ('T-500001', 'C-1004', '2026-11-18T07:30:00Z', 'out', 'bill_pay', 180000.00, 'settled'),
  ('T-500002', 'C-1004', '2026-11-18T19:05:00Z', 'out', 'withdrawal', 45500.50, 'settled'),
  ('T-500003', 'C-1010', '2026-11-19T06:00:00Z', 'in', 'incoming_payment', 3100.00, 'settled'),
  ('T-500004', 'C-1003', '2026-11-19T09:00:00Z', 'out', 'bill_pay', 200000.00, 'settled'),
  ('T-500005', 'C-1003', '2026-11-19T17:45:00Z', 'out', 'withdrawal', 60000.00, 'initiated'),
  ('T-500006', 'C-1011', '2026-11-19T21:00:00Z', 'in', 'incoming_payment', 900.50, 'settled'),
  ('T-500007', 'C-1002', '2026-11-19T23:59:59Z', 'out', 'bill_pay', 4100.00, 'settled'),
  ('T-500008', 'C-1009', '2026-11-20T03:15:00Z', 'out', 'bill_pay', 1250.00, 'settled'),
  ('T-500009', 'C-1001', '2026-11-20T08:00:00Z', 'out', 'bill_pay', 12000.00, 'settled'),
  ('T-500010', 'C-1002', '2026-11-20T09:14:00Z', 'out', 'bill_pay', 3200.00, 'settled'),
  ('T-500011', 'C-1001', '2026-11-20T10:10:00Z', 'in', 'incoming_payment', 4000.00, 'settled'),
  ('T-500012', 'C-1002', '2026-11-20T11:02:30Z', 'out', 'withdrawal', 1500.00, 'settled'),
  ('T-500013', 'C-1002', '2026-11-20T12:00:00Z', 'out', 'tax_payment', 2000.00, 'settled'),
  ('T-500014', 'C-1005', '2026-11-20T12:34:56Z', 'in', 'incoming_payment', 2750.25, 'settled'),
  ('T-500015', 'C-1002', '2026-11-20T13:30:00Z', 'out', 'internal_transfer', 1000.00, 'settled'),
  ('T-500016', 'C-1006', '2026-11-20T14:00:00Z', 'out', 'bill_pay', 20000.00, 'settled'),
  ('T-500017', 'C-1001', '2026-11-20T15:20:00Z', 'out', 'withdrawal', 6200.00, 'settled'),
  ('T-500018', 'C-1002', '2026-11-20T16:45:10Z', 'out', 'customer_refund', 650.00, 'cancelled'),
  ('T-500019', 'C-1006', '2026-11-20T18:30:00Z', 'out', 'customer_refund', 4100.00, 'settled'),
  ('T-500020', 'C-1007', '2026-11-20T23:59:59Z', 'in', 'incoming_payment', 1249.75, 'settled'),
  ('T-500021', 'C-1002', '2026-11-21T00:00:00Z', 'out', 'bill_pay', 900.00, 'initiated'),
  ('T-500022', 'C-1008', '2026-11-21T00:00:00Z', 'in', 'incoming_payment', 500.00, 'settled'),
  ('T-500023', 'C-1013', '2026-11-20T10:00:00Z', 'out', 'bill_pay', 3000.00, 'settled');
INSERT INTO api_keys VALUES
  ('key_1', 'C-1001', 'sk_live_SECRET_do_not_leak_7f3a'),
  ('key_2', 'C-1002', 'sk_live_SECRET_do_not_leak_91bc');
