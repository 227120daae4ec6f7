-- ferry's store, version 2: what Puppet agents send. The same SQL runs on
-- SQLite and PostgreSQL; JSON kept as text.
CREATE TABLE reports (
    certname TEXT NOT NULL,
    transaction_uuid TEXT NOT NULL,
    environment TEXT NOT NULL,
    status TEXT NOT NULL,
    time TEXT NOT NULL,
    received_at TEXT NOT NULL,
    report TEXT NOT NULL,
    PRIMARY KEY (certname, transaction_uuid)
);

CREATE INDEX reports_received ON reports (certname, received_at);

CREATE TABLE facts (
    certname TEXT PRIMARY KEY,
    environment TEXT NOT NULL,
    received_at TEXT NOT NULL,
    facts TEXT NOT NULL
);
