//! What every fuzz target shares: a deterministic proptest configuration and the committed
//! seed corpus. Used by the pure targets (`server/src/fuzz/`, unit tests) and included by
//! path in the ones that need a database (`server/tests/fuzz/`).
//!
//! A CI run is short and the same every time: each target has its own fixed seed and case
//! count. A longer pass raises the count and may pick another seed:
//!
//! ```sh
//! PROPTEST_CASES=100000 PROPTEST_RNG_SEED=7 cargo test --release -p verdict --lib fuzz
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestError, TestRunner};

/// The configuration of one target: `cases` random cases unless `PROPTEST_CASES` says
/// otherwise, a seed derived from the target's name unless `PROPTEST_RNG_SEED` gives one,
/// and no failure files written beside the sources (a failure worth keeping goes into the
/// corpus by hand, named for what it found).
pub fn config(target: &str, cases: u32) -> Config {
    let mut c = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        c.cases = cases;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        // FNV-1a of the name: a stable seed per target.
        let seed = target.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        c.rng_seed = RngSeed::Fixed(seed);
    }
    if std::env::var_os("PROPTEST_RNG_ALGORITHM").is_none() {
        c.rng_algorithm = RngAlgorithm::ChaCha;
    }
    if std::env::var_os("PROPTEST_MAX_SHRINK_TIME").is_none() {
        c.max_shrink_time = 60_000;
    }
    c.failure_persistence = None;
    c
}

/// Runs `test` on `cases` random inputs from `strategy` (see [`config`]) and panics with
/// the smallest failing input proptest could shrink to.
pub fn run<S: Strategy>(
    target: &str,
    cases: u32,
    strategy: &S,
    test: impl Fn(S::Value) -> Result<(), proptest::test_runner::TestCaseError>,
) where
    S::Value: std::fmt::Debug,
{
    let config = config(target, cases);
    let (n, seed) = (config.cases, config.rng_seed);
    let started = Instant::now();
    let mut runner = TestRunner::new(config);
    match runner.run(strategy, test) {
        Ok(()) => eprintln!(
            "fuzz {target}: {n} random cases (seed {seed}) passed in {:.2?}",
            started.elapsed()
        ),
        Err(TestError::Fail(why, input)) => {
            panic!("fuzz {target} (seed {seed}): {why}\nminimal failing input: {input:#?}")
        }
        Err(TestError::Abort(why)) => panic!("fuzz {target} (seed {seed}) aborted: {why}"),
    }
}

/// The directory of `target`'s seed corpus: `server/tests/fuzz-corpus/<target>/`.
pub fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-corpus")
        .join(target)
}

/// Every file of `target`'s corpus, by name, sorted; panics when there is none (a target
/// whose corpus went missing would otherwise pass on random cases alone).
pub fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir(target);
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.expect("corpus entry").path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("corpus file {}: {e}", path.display()));
            (name, bytes)
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "corpus {} is empty", dir.display());
    files
}

/// The corpus files that are JSON arrays of strings, flattened: for targets whose inputs
/// are single strings (`[ "input", ... ]` keeps control characters and lone surrogates'
/// neighbours readable in a file).
pub fn corpus_strings(target: &str) -> Vec<(String, String)> {
    corpus(target)
        .into_iter()
        .filter(|(name, _)| name.ends_with(".json"))
        .flat_map(|(name, bytes)| {
            let list: Vec<String> = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                panic!("corpus {target}/{name} is not a JSON string list: {e}")
            });
            list.into_iter()
                .enumerate()
                .map(move |(i, s)| (format!("{name}[{i}]"), s))
        })
        .collect()
}
