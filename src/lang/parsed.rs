//! Process-wide caches of what was parsed from a text (templates, hiera
//! data): a server compiles catalog after catalog from the same files, and
//! parsing them again for each is most of a compile's work. An entry is
//! found by a key (the file's name) and used only when the text it was
//! parsed from is the same, compared whole, so a file changed on disk is
//! parsed again. Failures are not kept. Each cache is bounded: past its
//! size it starts over.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// How many entries a cache keeps before it starts over.
const MAX_ENTRIES: usize = 4096;

/// Key → (the text, what was parsed from it).
type Entries<T> = HashMap<String, (String, Arc<T>)>;

/// One cache.
pub struct Parsed<T>(OnceLock<Mutex<Entries<T>>>);

impl<T> Default for Parsed<T> {
    fn default() -> Self {
        Parsed::new()
    }
}

impl<T> Parsed<T> {
    pub const fn new() -> Parsed<T> {
        Parsed(OnceLock::new())
    }

    /// What `text` (known by `key`) parses to, parsed with `parse` unless
    /// it is kept.
    pub fn get_or_parse<E>(
        &self,
        key: &str,
        text: &str,
        parse: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        let map = self.0.get_or_init(Default::default);
        if let Some((kept, parsed)) = map.lock().unwrap_or_else(PoisonError::into_inner).get(key)
            && kept == text
        {
            return Ok(Arc::clone(parsed));
        }
        let parsed = Arc::new(parse()?);
        let mut map = map.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= MAX_ENTRIES {
            map.clear();
        }
        map.insert(key.to_string(), (text.to_string(), Arc::clone(&parsed)));
        Ok(parsed)
    }
}
