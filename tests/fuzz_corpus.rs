//! Replays the fuzzing corpora without libFuzzer: every file of
//! `fuzz/regressions/TARGET/` (crashes found once, kept for good) and a
//! deterministic slice of `fuzz/corpus/TARGET/` go through the same entry
//! points as the cargo-fuzz targets (`fuzz/src/lib.rs`, included here), and
//! none may panic. One test per target: `cargo test --test fuzz_corpus pql`.
//! `FUZZ_REPLAY_ALL=1` replays every corpus file instead of the slice.

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod targets;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Corpus files replayed per target (all regressions always are).
const SLICE: usize = 500;
/// Over this, one input is reported as slow (a debug build; libFuzzer's
/// limit on the optimised build is 10 s).
const SLOW: Duration = Duration::from_secs(5);

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.is_file())
            .collect(),
        Err(_) => Vec::new(),
    };
    out.sort();
    out
}

/// Every `step`-th file of the sorted list, so the slice spreads over the
/// whole corpus and is the same on every run.
fn slice(all: Vec<PathBuf>, n: usize) -> Vec<PathBuf> {
    if std::env::var_os("FUZZ_REPLAY_ALL").is_some() || all.len() <= n {
        return all;
    }
    let step = all.len().div_ceil(n);
    all.into_iter().step_by(step).collect()
}

fn replay(name: &str) {
    let (_, entry) = targets::TARGETS
        .iter()
        .find(|(t, _)| *t == name)
        .expect("a target of fuzz/src/lib.rs");
    let corpus = files(&fuzz_dir().join("corpus").join(name));
    assert!(!corpus.is_empty(), "fuzz/corpus/{name} is empty");
    let mut inputs = files(&fuzz_dir().join("regressions").join(name));
    inputs.extend(slice(corpus, SLICE));
    let mut problems = Vec::new();
    for path in &inputs {
        let data = match std::fs::read(path) {
            Ok(data) => data,
            // A fuzzer running on the corpus replaced the file meanwhile.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        let start = Instant::now();
        if catch_unwind(AssertUnwindSafe(|| entry(&data))).is_err() {
            problems.push(format!("{}: panicked", path.display()));
        }
        let took = start.elapsed();
        if took > SLOW {
            problems.push(format!("{}: took {took:?}", path.display()));
        }
    }
    targets::remove_scratch();
    assert!(
        problems.is_empty(),
        "{name}: {} of {} inputs failed:\n{}",
        problems.len(),
        inputs.len(),
        problems.join("\n")
    );
}

#[test]
fn every_fuzz_target_is_replayed() {
    let mut bins: Vec<String> = files(&fuzz_dir().join("fuzz_targets"))
        .iter()
        .filter_map(|p| Some(p.file_stem()?.to_str()?.to_string()))
        .collect();
    bins.sort();
    let mut known: Vec<String> = targets::TARGETS
        .iter()
        .map(|(t, _)| t.to_string())
        .collect();
    known.sort();
    assert_eq!(bins, known, "fuzz/fuzz_targets and fuzz/src/lib.rs TARGETS");
}

macro_rules! replay_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                replay(stringify!($name));
            }
        )*
        #[test]
        fn every_target_has_a_replay_test() {
            let tests = [$(stringify!($name)),*];
            for (t, _) in targets::TARGETS {
                assert!(tests.contains(t), "no replay test for target {t}");
            }
        }
    };
}

replay_tests!(
    pql,
    inventory,
    plan,
    api_body,
    known_hosts,
    ssh_config,
    task_metadata,
    task_output,
    parse,
    compile,
    template,
);
