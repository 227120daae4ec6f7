-- ferry's job store, version 1. The same SQL runs on SQLite and PostgreSQL:
-- only TEXT and BIGINT columns, ids assigned by the server, JSON kept as text.
CREATE TABLE jobs (
    id BIGINT PRIMARY KEY,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    owner TEXT NOT NULL,
    description TEXT NOT NULL,
    request TEXT NOT NULL,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    node_count BIGINT NOT NULL
);

CREATE TABLE nodes (
    job_id BIGINT NOT NULL REFERENCES jobs (id),
    name TEXT NOT NULL,
    state TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    result TEXT,
    PRIMARY KEY (job_id, name)
);

CREATE TABLE events (
    job_id BIGINT NOT NULL REFERENCES jobs (id),
    id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    node TEXT,
    at TEXT NOT NULL,
    message TEXT NOT NULL,
    details TEXT NOT NULL,
    PRIMARY KEY (job_id, id)
);

CREATE INDEX jobs_state ON jobs (state);
