//! `verdict bench calibrate`: time the estimator on a synthetic panel. No database.

use std::process::ExitCode;

use clap::Subcommand;

#[derive(Subcommand)]
pub(super) enum BenchCmd {
    /// Generate a synthetic panel with known truth and time a full calibration run
    /// (cross-validation + bootstrap); prints the time and the accuracy against the truth.
    Calibrate {
        /// Projects in the synthetic panel.
        #[arg(long, default_value_t = 2000)]
        projects: usize,
        /// Judges in the synthetic panel.
        #[arg(long, default_value_t = 300)]
        judges: usize,
        /// Reviews per project.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// Bootstrap rounds for the rank intervals.
        #[arg(long, default_value_t = 200)]
        bootstrap: u32,
        /// Random seed of the panel and the bootstrap.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

pub(super) fn run(cmd: BenchCmd) -> ExitCode {
    let BenchCmd::Calibrate {
        projects,
        judges,
        k,
        bootstrap,
        seed,
    } = cmd;
    let r = verdict::calibrate::bench(projects, judges, k, bootstrap, seed);
    println!(
        "calibrate: {projects} projects, {judges} judges, k={k}, bootstrap={bootstrap}, seed={seed}"
    );
    println!("  time (CV + fit + bootstrap): {:.3} s", r.seconds);
    println!(
        "  Kendall tau vs truth: raw mean {:.3}, calibrated {:.3}",
        r.kendall_tau_raw, r.kendall_tau_calibrated
    );
    println!(
        "  90% rank interval coverage of the true rank: {:.3}",
        r.coverage
    );
    ExitCode::SUCCESS
}
