//! Each test's duration, for `.ci/run`'s list of the slowest tests: libtest on stable
//! prints no per-test times, so [`run`](super::run) (and the few tests that do not go
//! through it) hold a [`Timer`], which appends `seconds<TAB>test name<TAB>outcome` to the
//! file named by `VERDICT_TEST_TIMES` when the test ends, passed or panicked. Without the
//! variable nothing is written.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::time::Instant;

/// The environment variable naming the file the durations are appended to.
pub const TIMES_VAR: &str = "VERDICT_TEST_TIMES";

/// Measures one test from its creation to its drop.
pub struct Timer {
    name: String,
    started: Instant,
}

impl Timer {
    /// Starts timing the test running on this thread: libtest names the thread after the
    /// test (`auth::log_in::sqlite`), and `#[tokio::test]` runs the body on it.
    pub fn start() -> Timer {
        let name = std::thread::current()
            .name()
            .unwrap_or("unnamed test")
            .to_owned();
        Timer {
            name,
            started: Instant::now(),
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        let Some(path) = std::env::var_os(TIMES_VAR) else {
            return;
        };
        let outcome = if std::thread::panicking() {
            "failed"
        } else {
            "ok"
        };
        let line = format!(
            "{:.3}\t{}\t{outcome}\n",
            self.started.elapsed().as_secs_f64(),
            self.name
        );
        // One write of one short line to a file opened for appending: lines of tests
        // running in parallel do not interleave.
        if let Ok(mut file) = OpenOptions::new().create(true).append(true).open(path) {
            let _ = file.write_all(line.as_bytes());
        }
    }
}
