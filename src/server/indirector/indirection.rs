//! The indirection: one model found and saved through a terminus, with an
//! optional cache terminus in front, as Puppet's `Indirection` does it.
//! `find` asks the cache first (unless the request says `ignore_cache`),
//! uses what it has while it has not expired, else asks the terminus and
//! saves what that found into the cache; `save` saves to the terminus and
//! then the cache; `destroy` removes from both. A cache entry expires
//! `ttl` after it was cached (its `expiration`, kept with it: in Puppet's
//! facts YAML, in the store's JSON); an entry that does not answer the
//! request ([`Model::answers`]: a catalog of another environment) is a
//! miss too. A cache that fails is logged and
//! passed over (it only saves work); the terminus's failure is the
//! caller's.
//!
//! Each model says what `find` is given ([`Model::Request`]: a certname,
//! or for a catalog the whole compile request) and each terminus
//! implements the operations it has for its model ([`Terminus`]); the
//! others are [`IndirectorError::Unsupported`]. `search` goes to the
//! terminus only.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::IndirectorError;

/// A model the indirector carries (facts, a catalog, a report).
pub trait Model: Clone + Send + Sync + 'static {
    /// Its indirection's name (`facts`, `catalog`, `report`).
    const NAME: &'static str;
    /// What `find` is given.
    type Request: Send + Sync;
    /// What `search` is given (`()` for a model no terminus searches).
    type Search: Send + Sync;
    /// The node a request is about.
    fn request_certname(request: &Self::Request) -> &str;
    /// The node it is about.
    fn certname(&self) -> &str;
    /// When it stops being used from a cache (RFC 3339), if ever.
    fn expiration(&self) -> Option<&str>;
    fn set_expiration(&mut self, at: Option<String>);
    /// Whether a cached model answers `request` (a catalog compiled in
    /// another environment does not); one that does not is a cache miss.
    fn answers(&self, request: &Self::Request) -> bool {
        let _ = request;
        true
    }
}

/// A place a model is found in and saved to.
#[async_trait::async_trait]
pub trait Terminus<M: Model>: Send + Sync {
    /// Its name in the config (`yaml`, `store`, `puppetdb`, `compiler`).
    fn name(&self) -> &'static str;
    /// The model for a request, or `None` when it has none.
    async fn find(&self, request: &M::Request) -> Result<Option<M>, IndirectorError> {
        let _ = request;
        Err(unsupported(self.name(), M::NAME, "find"))
    }
    /// The models a search selects.
    async fn search(&self, query: &M::Search) -> Result<Vec<M>, IndirectorError> {
        let _ = query;
        Err(unsupported(self.name(), M::NAME, "search"))
    }
    async fn save(&self, model: &M) -> Result<(), IndirectorError> {
        let _ = model;
        Err(unsupported(self.name(), M::NAME, "save"))
    }
    async fn destroy(&self, certname: &str) -> Result<(), IndirectorError> {
        let _ = certname;
        Err(unsupported(self.name(), M::NAME, "destroy"))
    }
}

fn unsupported(terminus: &'static str, model: &'static str, op: &'static str) -> IndirectorError {
    IndirectorError::Unsupported {
        terminus,
        model,
        op,
    }
}

/// How a `find` uses the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FindOptions {
    /// Do not read the cache (what is found is still saved into it).
    pub ignore_cache: bool,
}

/// The clock the indirection reads (a test's own, else the system's).
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// A model's terminus and cache.
pub struct Indirection<M: Model> {
    terminus: Arc<dyn Terminus<M>>,
    cache: Option<Arc<dyn Terminus<M>>>,
    /// How long a cache entry is used; `None`: until replaced.
    ttl: Option<Duration>,
    clock: Clock,
}

/// A time as expirations are written (Puppet's: RFC 3339, nanoseconds).
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.9f+00:00").to_string()
}

impl<M: Model> Indirection<M> {
    pub fn new(
        terminus: Arc<dyn Terminus<M>>,
        cache: Option<Arc<dyn Terminus<M>>>,
        ttl: Option<Duration>,
    ) -> Self {
        Indirection {
            terminus,
            cache,
            ttl,
            clock: Arc::new(Utc::now),
        }
    }

    /// The same indirection reading `clock` for the time.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The terminus's and the cache's names, for the log.
    pub fn describe(&self) -> String {
        match &self.cache {
            Some(c) => format!("{} (cache {})", self.terminus.name(), c.name()),
            None => self.terminus.name().to_string(),
        }
    }

    /// Whether a cached entry is past its expiration (one that cannot be
    /// read is).
    fn expired(&self, model: &M) -> bool {
        match model.expiration() {
            None => false,
            Some(at) => DateTime::parse_from_rfc3339(at)
                .map(|at| at.with_timezone(&Utc) <= (self.clock)())
                .unwrap_or(true),
        }
    }

    /// `model` with the expiration a cache entry made now gets.
    fn for_cache(&self, model: &M) -> M {
        let mut entry = model.clone();
        let now = (self.clock)();
        entry.set_expiration(self.ttl.map(|ttl| {
            timestamp(now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX))
        }));
        entry
    }

    async fn fill_cache(&self, cache: &Arc<dyn Terminus<M>>, model: &M) {
        if let Err(e) = cache.save(&self.for_cache(model)).await {
            tracing::warn!(
                "cannot cache the {} of {} in {}: {e}",
                M::NAME,
                model.certname(),
                cache.name()
            );
        }
    }

    /// The model for `request`: the cache's while it has not expired,
    /// else the terminus's (then cached).
    pub async fn find(
        &self,
        request: &M::Request,
        options: FindOptions,
    ) -> Result<Option<M>, IndirectorError> {
        let certname = M::request_certname(request);
        if let Some(cache) = self.cache.as_ref().filter(|_| !options.ignore_cache) {
            match cache.find(request).await {
                Ok(Some(m)) if !m.answers(request) => tracing::info!(
                    "the cached {} of {certname} does not answer this request",
                    M::NAME
                ),
                Ok(Some(m)) if !self.expired(&m) => return Ok(Some(m)),
                Ok(Some(_)) => {
                    tracing::info!(
                        "not using the expired {} of {certname} from the cache",
                        M::NAME
                    )
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(
                    "cannot read the {} of {certname} from the {} cache: {e}",
                    M::NAME,
                    cache.name()
                ),
            }
        }
        let found = self.terminus.find(request).await?;
        if let (Some(m), Some(cache)) = (&found, &self.cache) {
            self.fill_cache(cache, m).await;
        }
        Ok(found)
    }

    /// The models a search selects, from the terminus (a cache holds
    /// what was found by name; it is not searched, as in Puppet).
    pub async fn search(&self, query: &M::Search) -> Result<Vec<M>, IndirectorError> {
        self.terminus.search(query).await
    }

    /// Saves to the terminus, then to the cache.
    pub async fn save(&self, model: &M) -> Result<(), IndirectorError> {
        self.terminus.save(model).await?;
        if let Some(cache) = &self.cache {
            self.fill_cache(cache, model).await;
        }
        Ok(())
    }

    /// Removes the node's model from the terminus and the cache.
    pub async fn destroy(&self, certname: &str) -> Result<(), IndirectorError> {
        self.terminus.destroy(certname).await?;
        if let Some(cache) = &self.cache {
            cache.destroy(certname).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The cache semantics as a table: each case is steps against a
    //! terminus and a cache kept in memory, at times of the test's own
    //! clock, and what each `find` gives and from where.

    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicI64, Ordering};

    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Thing {
        name: String,
        value: &'static str,
        expiration: Option<String>,
    }

    impl Model for Thing {
        const NAME: &'static str = "thing";
        type Request = String;
        type Search = ();
        fn request_certname(request: &String) -> &str {
            request
        }
        fn certname(&self) -> &str {
            &self.name
        }
        fn expiration(&self) -> Option<&str> {
            self.expiration.as_deref()
        }
        fn set_expiration(&mut self, at: Option<String>) {
            self.expiration = at;
        }
        /// The value `elsewhere` stands for a catalog of another
        /// environment: never an answer from the cache.
        fn answers(&self, _: &String) -> bool {
            self.value != "elsewhere"
        }
    }

    /// A terminus in memory that counts its finds.
    #[derive(Default)]
    struct Memory {
        kept: Mutex<HashMap<String, Thing>>,
        finds: AtomicI64,
        broken: bool,
    }

    #[async_trait::async_trait]
    impl Terminus<Thing> for Memory {
        fn name(&self) -> &'static str {
            "memory"
        }
        async fn find(&self, key: &String) -> Result<Option<Thing>, IndirectorError> {
            self.finds.fetch_add(1, Ordering::SeqCst);
            if self.broken {
                return Err(IndirectorError::BadCertname(key.clone()));
            }
            Ok(self.kept.lock().expect("lock").get(key).cloned())
        }
        async fn save(&self, t: &Thing) -> Result<(), IndirectorError> {
            self.kept
                .lock()
                .expect("lock")
                .insert(t.name.clone(), t.clone());
            Ok(())
        }
        async fn destroy(&self, key: &str) -> Result<(), IndirectorError> {
            self.kept.lock().expect("lock").remove(key);
            Ok(())
        }
    }

    /// One step: at `t` seconds, do `op` on node `n` (value `v` for a
    /// save), expecting `want` (`-`: nothing) from `from` (terminus `T`,
    /// cache `C`, `-`: neither).
    struct Step {
        t: i64,
        op: &'static str,
        n: &'static str,
        v: &'static str,
        want: &'static str,
        from: &'static str,
    }

    const fn s(
        t: i64,
        op: &'static str,
        n: &'static str,
        v: &'static str,
        want: &'static str,
        from: &'static str,
    ) -> Step {
        Step {
            t,
            op,
            n,
            v,
            want,
            from,
        }
    }

    /// (case, ttl seconds (0: unlimited), terminus-only puts, steps).
    type Case = (
        &'static str,
        u64,
        &'static [(&'static str, &'static str)],
        &'static [Step],
    );

    const CASES: &[Case] = &[
        (
            "a miss asks the terminus and fills the cache; then a hit",
            60,
            &[("a", "one")],
            &[
                s(0, "find", "a", "", "one", "T"),
                s(1, "find", "a", "", "one", "C"),
                s(2, "find", "b", "", "-", "T"),
            ],
        ),
        (
            "an entry expires ttl after it was cached",
            60,
            &[("a", "one")],
            &[
                s(0, "find", "a", "", "one", "T"),
                s(59, "find", "a", "", "one", "C"),
                s(60, "find", "a", "", "one", "T"),
                s(61, "find", "a", "", "one", "C"),
            ],
        ),
        (
            "ignore_cache asks the terminus and refreshes the cache",
            60,
            &[("a", "one")],
            &[
                s(0, "find", "a", "", "one", "T"),
                s(1, "put", "a", "two", "", ""),
                s(2, "find", "a", "", "one", "C"),
                s(3, "fresh", "a", "", "two", "T"),
                s(4, "find", "a", "", "two", "C"),
            ],
        ),
        (
            "save goes to both; destroy empties both",
            60,
            &[],
            &[
                s(0, "save", "a", "one", "", ""),
                s(1, "find", "a", "", "one", "C"),
                s(2, "destroy", "a", "", "", ""),
                s(3, "find", "a", "", "-", "T"),
            ],
        ),
        (
            "an entry that does not answer the request is a miss",
            60,
            &[("a", "elsewhere")],
            &[
                s(0, "find", "a", "", "elsewhere", "T"),
                s(1, "find", "a", "", "elsewhere", "T"),
                s(2, "put", "a", "one", "", ""),
                s(3, "find", "a", "", "one", "T"),
                s(4, "find", "a", "", "one", "C"),
            ],
        ),
        (
            "unlimited never expires",
            0,
            &[("a", "one")],
            &[
                s(0, "find", "a", "", "one", "T"),
                s(1_000_000, "find", "a", "", "one", "C"),
            ],
        ),
    ];

    fn run_case(case: &Case) {
        let (name, ttl, puts, steps) = case;
        let terminus = Arc::new(Memory::default());
        for (n, v) in puts.iter() {
            terminus.kept.lock().expect("lock").insert(
                n.to_string(),
                Thing {
                    name: n.to_string(),
                    value: v,
                    expiration: None,
                },
            );
        }
        let cache = Arc::new(Memory::default());
        let now = Arc::new(AtomicI64::new(0));
        let base = DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .expect("time")
            .with_timezone(&Utc);
        let clock_now = Arc::clone(&now);
        let ind = Indirection::<Thing>::new(
            terminus.clone(),
            Some(cache.clone()),
            (*ttl > 0).then(|| Duration::from_secs(*ttl)),
        )
        .with_clock(Arc::new(move || {
            base + chrono::Duration::seconds(clock_now.load(Ordering::SeqCst))
        }));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        for (i, st) in steps.iter().enumerate() {
            now.store(st.t, Ordering::SeqCst);
            let before = terminus.finds.load(Ordering::SeqCst);
            let thing = Thing {
                name: st.n.into(),
                value: st.v,
                expiration: None,
            };
            let found = rt.block_on(async {
                match st.op {
                    "find" | "fresh" => {
                        let o = FindOptions {
                            ignore_cache: st.op == "fresh",
                        };
                        ind.find(&st.n.to_string(), o).await.map(Some)
                    }
                    "save" => ind.save(&thing).await.map(|_| None),
                    "put" => terminus.save(&thing).await.map(|_| None),
                    _ => ind.destroy(st.n).await.map(|_| None),
                }
            });
            let Some(found) = found.expect("no error") else {
                continue;
            };
            let asked = terminus.finds.load(Ordering::SeqCst) > before;
            let got = found.as_ref().map_or("-", |t| t.value);
            assert_eq!(got, st.want, "{name}: step {i}");
            assert_eq!(if asked { "T" } else { "C" }, st.from, "{name}: step {i}");
        }
    }

    #[test]
    fn cache_semantics() {
        for case in CASES {
            run_case(case);
        }
    }

    #[test]
    fn a_broken_cache_is_passed_over_and_a_broken_terminus_is_an_error() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let terminus = Arc::new(Memory::default());
        let thing = Thing {
            name: "a".into(),
            value: "one",
            expiration: None,
        };
        rt.block_on(terminus.save(&thing)).expect("put");
        let broken = Arc::new(Memory {
            broken: true,
            ..Memory::default()
        });
        let ind = Indirection::<Thing>::new(terminus, Some(broken.clone()), None);
        let got = rt
            .block_on(ind.find(&"a".to_string(), FindOptions::default()))
            .expect("found through the terminus");
        assert_eq!(got.map(|t| t.value), Some("one"));
        let ind = Indirection::<Thing>::new(broken, None, None);
        assert!(
            rt.block_on(ind.find(&"a".to_string(), FindOptions::default()))
                .is_err()
        );
    }

    #[test]
    fn an_unreadable_expiration_is_expired() {
        let ind = Indirection::<Thing>::new(Arc::new(Memory::default()), None, None);
        let mut t = Thing {
            name: "a".into(),
            value: "one",
            expiration: Some("soon".into()),
        };
        assert!(ind.expired(&t));
        t.expiration = Some("2999-01-01T00:00:00.000000000+00:00".into());
        assert!(!ind.expired(&t));
    }
}
