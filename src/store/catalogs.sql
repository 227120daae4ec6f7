-- ferry's store, version 3: each node's last compiled catalog (the
-- catalog indirection's `store` cache). JSON kept as text.
CREATE TABLE catalogs (
    certname TEXT PRIMARY KEY,
    environment TEXT NOT NULL,
    compiled_at TEXT NOT NULL,
    expiration TEXT,
    catalog TEXT NOT NULL
);
