//! How far a calibration has come, for the background job that runs it
//! (`startCalibration`) to report while the engine computes on another thread. The
//! job records the stages around the engine's (reading the inputs, storing the run).
//! The engine only stores; a step costs one relaxed atomic store, and
//! [`Progress::none`] is what every caller that does not watch passes.

use std::sync::atomic::{AtomicU64, Ordering};

/// The stages of a calibration, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Reading the event's reviews and pinning them as the run's inputs (before the engine).
    Reading,
    /// Reweighting passes at the pilot λ (judges' noise settling).
    Weighting,
    /// One fit per fold, each tried at every λ of the grid.
    CrossValidating,
    /// The passes at the chosen λ.
    Fitting,
    /// The draws behind the rank intervals (posterior draws; bootstrap replicates before
    /// engine v3): drawing them, then ranking them.
    Bootstrapping,
    /// Checking the inputs are unchanged, then signing and storing the run (after the
    /// engine).
    Storing,
}

impl Stage {
    const ALL: [Stage; 6] = [
        Stage::Reading,
        Stage::Weighting,
        Stage::CrossValidating,
        Stage::Fitting,
        Stage::Bootstrapping,
        Stage::Storing,
    ];
}

/// `done` of `total` steps of `stage`. Packed into one word so that a reader never
/// sees a stage with another stage's counts.
#[derive(Debug, Default)]
pub struct Progress(AtomicU64);

/// Counts are kept to 28 bits each (268 million steps is far beyond any stage).
const COUNT_BITS: u32 = 28;
const COUNT_MAX: u64 = (1 << COUNT_BITS) - 1;

impl Progress {
    /// A progress nobody reads.
    pub fn none() -> &'static Progress {
        static NONE: Progress = Progress(AtomicU64::new(0));
        &NONE
    }

    /// Records that `done` of `total` steps of `stage` are done.
    pub fn step(&self, stage: Stage, done: usize, total: usize) {
        let count = |n: usize| (n as u64).min(COUNT_MAX);
        let stage = Stage::ALL.iter().position(|s| *s == stage).unwrap_or(0) as u64 + 1;
        self.0.store(
            stage << (2 * COUNT_BITS) | count(done) << COUNT_BITS | count(total),
            Ordering::Relaxed,
        );
    }

    /// The last step recorded: `None` before the first.
    pub fn read(&self) -> Option<(Stage, u32, u32)> {
        let v = self.0.load(Ordering::Relaxed);
        let stage = *Stage::ALL.get(((v >> (2 * COUNT_BITS)) as usize).checked_sub(1)?)?;
        Some((
            stage,
            ((v >> COUNT_BITS) & COUNT_MAX) as u32,
            (v & COUNT_MAX) as u32,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_back_whole_and_counts_saturate() {
        let p = Progress::default();
        assert_eq!(p.read(), None);
        p.step(Stage::CrossValidating, 2, 5);
        assert_eq!(p.read(), Some((Stage::CrossValidating, 2, 5)));
        p.step(Stage::Bootstrapping, usize::MAX, 400);
        assert_eq!(
            p.read(),
            Some((Stage::Bootstrapping, COUNT_MAX as u32, 400))
        );
    }
}
