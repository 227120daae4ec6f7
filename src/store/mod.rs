//! The job store: jobs, their nodes, events and results, kept in a database
//! so that a restarted server still knows them. One code path serves both
//! backends through sqlx's `Any` driver: an embedded SQLite file (the
//! default, nothing to set up) or PostgreSQL when the URL says
//! `postgres://`. The schema is portable migrations (`schema.sql` for jobs,
//! `puppet.sql` for what Puppet agents send, `catalogs.sql` for compiled
//! catalogs), applied at open. Every change that belongs together (a node's result and
//! its event, a job's final state and `job_finished`) is written in one
//! transaction, so a server killed mid-job loses no finished result. A job
//! is finished once: [`Store::finish_job`] only ends a job that has not
//! ended yet, so two finishers (the runner, a stop) never write two
//! `job_finished` events. Ids are assigned by the server: one server per
//! store. A SQLite database is private to the server's user (`private`).

mod private;
mod puppet;
mod records;
mod states;

use std::borrow::Cow;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::Value;
use sqlx::any::{AnyPoolOptions, install_default_drivers};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyPool, Row};

pub use puppet::{CatalogRecord, FactsRecord, ReportKey, ReportRecord};
pub use records::{EventRecord, JobRecord, NodeRecord, now};
pub use states::{EventKind, JobState, NodeState, UnknownValue};

/// The final job states, as an SQL list (checked against [`JobState`] by a
/// test).
const FINAL_JOBS: &str = "('stopped', 'finished', 'failed')";
/// The job states of a job still under way.
const OPEN_JOBS: &str = "('new', 'ready', 'running', 'stopping')";
/// The node states of a node still under way.
const OPEN_NODES: &str = "('new', 'ready', 'running')";

/// Why the store failed. Messages name the operation, never a password.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("store URL must start with sqlite: or postgres:// (got '{0}')")]
    Url(String),
    #[error("cannot open the store: {0}")]
    Open(String),
    #[error("cannot create the store file {path}: {source}")]
    File {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot migrate the store: {0}")]
    Migrate(String),
    #[error("store {op} failed: {message}")]
    Query { op: &'static str, message: String },
}

fn query_error(op: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |e| StoreError::Query {
        op,
        message: e.to_string(),
    }
}

/// The database behind the server.
pub struct Store {
    pool: AnyPool,
    postgres: bool,
    next_job: AtomicI64,
}

/// The migrations, embedded: the same SQL for both backends.
fn migrator() -> Migrator {
    Migrator {
        migrations: Cow::Owned(vec![
            Migration::new(
                1,
                Cow::Borrowed("jobs nodes events"),
                MigrationType::Simple,
                Cow::Borrowed(include_str!("schema.sql")),
                false,
            ),
            Migration::new(
                2,
                Cow::Borrowed("puppet reports facts"),
                MigrationType::Simple,
                Cow::Borrowed(include_str!("puppet.sql")),
                false,
            ),
            Migration::new(
                3,
                Cow::Borrowed("puppet catalogs"),
                MigrationType::Simple,
                Cow::Borrowed(include_str!("catalogs.sql")),
                false,
            ),
        ]),
        ..Migrator::DEFAULT
    }
}

/// Hides a password in a database URL for messages.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:[redacted]{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// The default store: `ferry.db` in the cache directory.
pub fn default_url(cache_dir: &Path) -> String {
    format!("sqlite://{}", cache_dir.join("ferry.db").display())
}

impl Store {
    /// Opens (creating if needed) and migrates the store at `url`.
    pub async fn open(url: &str) -> Result<Store, StoreError> {
        install_default_drivers();
        let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
        let sqlite = url.starts_with("sqlite:");
        if !postgres && !sqlite {
            return Err(StoreError::Url(redact_url(url)));
        }
        if let Some(path) = private::sqlite_path(url).filter(|_| sqlite) {
            private::prepare(&path).map_err(|source| StoreError::File {
                path: path.display().to_string(),
                source,
            })?;
        }
        let url = if sqlite && !url.contains('?') {
            format!("{url}?mode=rwc")
        } else {
            url.to_string()
        };
        let options = AnyPoolOptions::new()
            .max_connections(if sqlite { 4 } else { 8 })
            .acquire_timeout(std::time::Duration::from_secs(10));
        let options = if sqlite {
            options.after_connect(|conn, _| {
                Box::pin(async move {
                    for pragma in [
                        "PRAGMA journal_mode = WAL",
                        "PRAGMA synchronous = NORMAL",
                        "PRAGMA foreign_keys = ON",
                        "PRAGMA busy_timeout = 10000",
                    ] {
                        sqlx::query(pragma).execute(&mut *conn).await?;
                    }
                    Ok(())
                })
            })
        } else {
            options
        };
        let pool = options
            .connect(&url)
            .await
            .map_err(|e| StoreError::Open(redact_url(&e.to_string())))?;
        migrator()
            .run(&pool)
            .await
            .map_err(|e| StoreError::Migrate(e.to_string()))?;
        let store = Store {
            pool,
            postgres,
            next_job: AtomicI64::new(1),
        };
        let max: i64 = sqlx::query("SELECT COALESCE(MAX(id), 0) AS m FROM jobs")
            .fetch_one(&store.pool)
            .await
            .and_then(|r| r.try_get("m"))
            .map_err(query_error("read job ids"))?;
        store.next_job.store(max + 1, Ordering::SeqCst);
        Ok(store)
    }

    /// Which backend this is, for logs and metrics.
    pub fn backend(&self) -> &'static str {
        if self.postgres { "postgres" } else { "sqlite" }
    }

    /// `?` placeholders as the backend wants them (`$1`.. for PostgreSQL).
    fn sql<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.postgres {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len() + 8);
        let mut n = 0;
        for c in text.chars() {
            if c == '?' {
                n += 1;
                out.push('$');
                out.push_str(&n.to_string());
            } else {
                out.push(c);
            }
        }
        Cow::Owned(out)
    }

    /// Records a new job in state `ready` with its nodes in state `new`.
    pub async fn create_job(
        &self,
        kind: &str,
        owner: &str,
        description: &str,
        request: &Value,
        nodes: &[String],
    ) -> Result<JobRecord, StoreError> {
        let id = self.next_job.fetch_add(1, Ordering::SeqCst);
        let created_at = now();
        let mut tx = self.pool.begin().await.map_err(query_error("begin"))?;
        sqlx::query(&self.sql(
            "INSERT INTO jobs (id, kind, state, owner, description, request, created_at, node_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ))
        .bind(id)
        .bind(kind)
        .bind(JobState::Ready.as_str())
        .bind(owner)
        .bind(description)
        .bind(request.to_string())
        .bind(&created_at)
        .bind(nodes.len() as i64)
        .execute(&mut *tx)
        .await
        .map_err(query_error("insert job"))?;
        for name in nodes {
            sqlx::query(&self.sql("INSERT INTO nodes (job_id, name, state) VALUES (?, ?, ?)"))
                .bind(id)
                .bind(name)
                .bind(NodeState::New.as_str())
                .execute(&mut *tx)
                .await
                .map_err(query_error("insert node"))?;
        }
        tx.commit().await.map_err(query_error("commit job"))?;
        Ok(JobRecord {
            id,
            kind: kind.into(),
            state: JobState::Ready,
            owner: owner.into(),
            description: description.into(),
            request: request.clone(),
            created_at,
            finished_at: None,
            node_count: nodes.len() as i64,
        })
    }

    /// Sets the state of a job that has not ended (not a final one: see
    /// [`Store::finish_job`]); an ended job keeps its final state.
    pub async fn set_job_state(&self, job: i64, state: JobState) -> Result<(), StoreError> {
        sqlx::query(&self.sql(&format!(
            "UPDATE jobs SET state = ? WHERE id = ? AND state NOT IN {FINAL_JOBS}"
        )))
        .bind(state.as_str())
        .bind(job)
        .execute(&self.pool)
        .await
        .map_err(query_error("update job"))?;
        Ok(())
    }

    /// A node starts: its state and the `node_running` event, together.
    pub async fn node_started(&self, job: i64, event: &EventRecord) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.map_err(query_error("begin"))?;
        sqlx::query(
            &self.sql("UPDATE nodes SET state = ?, started_at = ? WHERE job_id = ? AND name = ?"),
        )
        .bind(NodeState::Running.as_str())
        .bind(&event.at)
        .bind(job)
        .bind(event.node.as_deref().unwrap_or_default())
        .execute(&mut *tx)
        .await
        .map_err(query_error("update node"))?;
        self.insert_event(&mut tx, job, event).await?;
        tx.commit().await.map_err(query_error("commit node"))
    }

    /// An event that changes no state (a resource event of an apply).
    pub async fn add_event(&self, job: i64, event: &EventRecord) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.map_err(query_error("begin"))?;
        self.insert_event(&mut tx, job, event).await?;
        tx.commit().await.map_err(query_error("commit event"))
    }

    /// A node ends: its state, result and event, in one transaction.
    pub async fn node_finished(
        &self,
        job: i64,
        state: NodeState,
        result: &Value,
        event: &EventRecord,
    ) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.map_err(query_error("begin"))?;
        sqlx::query(&self.sql(
            "UPDATE nodes SET state = ?, finished_at = ?, result = ? WHERE job_id = ? AND name = ?",
        ))
        .bind(state.as_str())
        .bind(&event.at)
        .bind(result.to_string())
        .bind(job)
        .bind(event.node.as_deref().unwrap_or_default())
        .execute(&mut *tx)
        .await
        .map_err(query_error("update node"))?;
        self.insert_event(&mut tx, job, event).await?;
        tx.commit().await.map_err(query_error("commit node"))
    }

    /// A job ends: nodes that never finished take `node_state`, the job its
    /// final state, and `job_finished` is written, all in one transaction.
    /// Only a job that has not ended yet is ended: false (and nothing
    /// written) when it already had a final state.
    pub async fn finish_job(
        &self,
        job: i64,
        state: JobState,
        node_state: NodeState,
        event: &EventRecord,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await.map_err(query_error("begin"))?;
        let ended = sqlx::query(&self.sql(&format!(
            "UPDATE jobs SET state = ?, finished_at = ? WHERE id = ? AND state NOT IN {FINAL_JOBS}"
        )))
        .bind(state.as_str())
        .bind(&event.at)
        .bind(job)
        .execute(&mut *tx)
        .await
        .map_err(query_error("update job"))?
        .rows_affected();
        if ended == 0 {
            tx.rollback().await.map_err(query_error("rollback"))?;
            return Ok(false);
        }
        sqlx::query(&self.sql(&format!(
            "UPDATE nodes SET state = ?, finished_at = ? WHERE job_id = ? AND state IN {OPEN_NODES}"
        )))
        .bind(node_state.as_str())
        .bind(&event.at)
        .bind(job)
        .execute(&mut *tx)
        .await
        .map_err(query_error("update nodes"))?;
        self.insert_event(&mut tx, job, event).await?;
        tx.commit().await.map_err(query_error("commit job"))?;
        Ok(true)
    }

    async fn insert_event(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        job: i64,
        e: &EventRecord,
    ) -> Result<(), StoreError> {
        sqlx::query(&self.sql(
            "INSERT INTO events (job_id, id, kind, node, at, message, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ))
        .bind(job)
        .bind(e.id)
        .bind(e.kind.as_str())
        .bind(e.node.clone())
        .bind(&e.at)
        .bind(&e.message)
        .bind(e.details.to_string())
        .execute(&mut **tx)
        .await
        .map_err(query_error("insert event"))?;
        Ok(())
    }

    /// Jobs that were not finished when the server stopped become `failed`,
    /// with a `job_finished` event saying why. Returns their ids.
    pub async fn recover(&self) -> Result<Vec<i64>, StoreError> {
        let rows = sqlx::query(&format!("SELECT id FROM jobs WHERE state IN {OPEN_JOBS}"))
            .fetch_all(&self.pool)
            .await
            .map_err(query_error("find unfinished jobs"))?;
        let mut ids = Vec::new();
        for row in rows {
            let id: i64 = row.try_get("id").map_err(query_error("read job id"))?;
            let next = self.next_event_id(id).await?;
            let event = EventRecord::new(
                next,
                EventKind::JobFinished,
                None,
                "The server stopped while this job was running; it was marked failed at restart",
                serde_json::json!({ "state": "failed", "reason": "server-restart" }),
            );
            if self
                .finish_job(id, JobState::Failed, NodeState::Failed, &event)
                .await?
            {
                ids.push(id);
            }
        }
        Ok(ids)
    }

    /// The id the next event of a job gets.
    pub async fn next_event_id(&self, job: i64) -> Result<i64, StoreError> {
        let row =
            sqlx::query(&self.sql("SELECT COALESCE(MAX(id), 0) AS m FROM events WHERE job_id = ?"))
                .bind(job)
                .fetch_one(&self.pool)
                .await
                .map_err(query_error("read event ids"))?;
        let max: i64 = row.try_get("m").map_err(query_error("read event ids"))?;
        Ok(max + 1)
    }

    /// Jobs (of one kind, such as `plan`, or of every kind), newest
    /// first, and how many there are in all.
    pub async fn jobs(
        &self,
        kind: Option<&str>,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<JobRecord>, i64), StoreError> {
        let filter = if kind.is_some() {
            " WHERE kind = ?"
        } else {
            ""
        };
        let count_text = format!("SELECT COUNT(*) AS n FROM jobs{filter}");
        let list_text = format!(
            "SELECT {} FROM jobs{filter} ORDER BY id DESC LIMIT ? OFFSET ?",
            records::JOB_COLUMNS
        );
        let (count_sql, list_sql) = (self.sql(&count_text), self.sql(&list_text));
        let mut count = sqlx::query(&count_sql);
        let mut list = sqlx::query(&list_sql);
        if let Some(kind) = kind {
            count = count.bind(kind);
            list = list.bind(kind);
        }
        let total: i64 = count
            .fetch_one(&self.pool)
            .await
            .and_then(|r| r.try_get("n"))
            .map_err(query_error("count jobs"))?;
        let rows = list
            .bind(limit)
            .bind(offset)
            .fetch_all(&self.pool)
            .await
            .map_err(query_error("list jobs"))?;
        let jobs = rows
            .iter()
            .map(JobRecord::from_row)
            .collect::<Result<_, _>>()
            .map_err(query_error("read jobs"))?;
        Ok((jobs, total))
    }

    pub async fn job(&self, id: i64) -> Result<Option<JobRecord>, StoreError> {
        let row = sqlx::query(&self.sql(&format!(
            "SELECT {} FROM jobs WHERE id = ?",
            records::JOB_COLUMNS
        )))
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(query_error("read job"))?;
        row.as_ref()
            .map(JobRecord::from_row)
            .transpose()
            .map_err(query_error("read job"))
    }

    pub async fn nodes(&self, job: i64) -> Result<Vec<NodeRecord>, StoreError> {
        let rows = sqlx::query(&self.sql(
            "SELECT name, state, started_at, finished_at, result FROM nodes WHERE job_id = ? ORDER BY name",
        ))
        .bind(job)
        .fetch_all(&self.pool)
        .await
        .map_err(query_error("list nodes"))?;
        rows.iter()
            .map(NodeRecord::from_row)
            .collect::<Result<_, _>>()
            .map_err(query_error("read nodes"))
    }

    /// A job's events with id >= `start`, in order.
    pub async fn events(&self, job: i64, start: i64) -> Result<Vec<EventRecord>, StoreError> {
        self.events_page(job, start, i64::MAX).await
    }

    /// At most `limit` of a job's events with id >= `start`, in order.
    pub async fn events_page(
        &self,
        job: i64,
        start: i64,
        limit: i64,
    ) -> Result<Vec<EventRecord>, StoreError> {
        let rows = sqlx::query(&self.sql(
            "SELECT id, kind, node, at, message, details FROM events WHERE job_id = ? AND id >= ? ORDER BY id LIMIT ?",
        ))
        .bind(job)
        .bind(start)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .map_err(query_error("list events"))?;
        rows.iter()
            .map(EventRecord::from_row)
            .collect::<Result<_, _>>()
            .map_err(query_error("read events"))
    }

    /// Closes the pool (waits for connections to finish).
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(
            redact_url("postgres://ferry:hunter2@db:5432/x"),
            "postgres://ferry:[redacted]@db:5432/x"
        );
        assert_eq!(redact_url("postgres://ferry@db/x"), "postgres://ferry@db/x");
        assert_eq!(
            redact_url("sqlite:///var/ferry.db"),
            "sqlite:///var/ferry.db"
        );
    }

    #[test]
    fn sql_state_lists_match_the_enums() {
        let list = |states: Vec<&str>| format!("('{}')", states.join("', '"));
        let jobs = |done: bool| {
            list(
                JobState::ALL
                    .iter()
                    .filter(|s| s.is_final() == done)
                    .map(|s| s.as_str())
                    .collect(),
            )
        };
        assert_eq!(FINAL_JOBS, jobs(true));
        assert_eq!(OPEN_JOBS, jobs(false));
        let open = [NodeState::New, NodeState::Ready, NodeState::Running];
        assert_eq!(OPEN_NODES, list(open.iter().map(|s| s.as_str()).collect()));
    }

    #[tokio::test]
    async fn an_unknown_state_in_the_database_is_an_error() {
        let dir = tempfile::tempdir().expect("dir");
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = Store::open(&url).await.expect("open");
        let job = store
            .create_job("command", "me", "", &Value::Null, &["n1".to_string()])
            .await
            .expect("job");
        let read = store.job(job.id).await.expect("read").expect("job");
        assert_eq!(read.state, JobState::Ready);
        sqlx::query("UPDATE jobs SET state = 'paused'")
            .execute(&store.pool)
            .await
            .expect("update");
        let e = store.job(job.id).await.err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("unknown job state 'paused'")),
            "{e:?}"
        );
    }

    #[tokio::test]
    async fn placeholders_follow_the_backend() {
        let dir = tempfile::tempdir().expect("dir");
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let mut store = Store::open(&url).await.expect("open");
        assert_eq!(store.sql("a = ? AND b = ?"), "a = ? AND b = ?");
        store.postgres = true;
        assert_eq!(store.sql("a = ? AND b = ?"), "a = $1 AND b = $2");
    }
}
