//! What the engine claims about its own certainty, measured on synthetic panels with
//! known truth (test-only; issue 11's baseline). Run with
//! `cargo test --release --lib coverage_by_panel_shape -- --ignored --nocapture`.
//!
//! For each panel shape, over many seeds: the share of ranked projects whose true rank
//! lies in their 90 % rank interval (overall, and among the true top 10 %), the mean
//! interval width, and the judge flags: how often a judge who scores at random is
//! flagged, and how many honest judges are flagged (any flag but `ok`).

use super::synth::{JudgeKind, Panel, SynthParams};
use super::{FLAG_OK, Params, calibrate};

/// A panel shape: projects, judges, reviews per project.
struct Shape {
    name: &'static str,
    projects: usize,
    judges: usize,
    k: usize,
    seeds: u64,
}

const SHAPES: &[Shape] = &[
    Shape {
        name: "small",
        projects: 40,
        judges: 12,
        k: 3,
        seeds: 400,
    },
    Shape {
        name: "medium",
        projects: 150,
        judges: 40,
        k: 4,
        seeds: 200,
    },
    Shape {
        name: "k6",
        projects: 150,
        judges: 40,
        k: 6,
        seeds: 200,
    },
    Shape {
        name: "large",
        projects: 1000,
        judges: 200,
        k: 5,
        seeds: 40,
    },
    Shape {
        name: "larger",
        projects: 2000,
        judges: 300,
        k: 5,
        seeds: 20,
    },
    Shape {
        name: "sparse",
        projects: 300,
        judges: 200,
        k: 3,
        seeds: 100,
    },
];

#[derive(Default)]
struct Tally {
    with_interval: usize,
    covered: usize,
    top_with_interval: usize,
    top_covered: usize,
    width: f64,
    random_judges: usize,
    random_flagged: usize,
    honest_judges: usize,
    honest_flagged: usize,
    /// Flags raised on honest judges, by flag.
    honest_flags: std::collections::BTreeMap<String, usize>,
}

fn measure(panel: &Panel, seed: u64, t: &mut Tally) {
    let params = Params {
        bootstrap: 200,
        ..Params::default_for(seed)
    };
    let r = calibrate(&panel.input, &params);
    let ranked: Vec<_> = r.projects.iter().filter(|p| p.rank.is_some()).collect();
    let truth: Vec<f64> = ranked
        .iter()
        .map(|p| panel.truth_of(&p.id).unwrap_or(0.0))
        .collect();
    let top = ranked.len().div_ceil(10);
    for (i, p) in ranked.iter().enumerate() {
        let (Some(lo), Some(hi)) = (p.rank_low, p.rank_high) else {
            continue;
        };
        let true_rank = 1 + truth.iter().filter(|&&x| x > truth[i]).count();
        let hit = (lo as usize) <= true_rank && true_rank <= hi as usize;
        t.with_interval += 1;
        t.covered += usize::from(hit);
        t.width += f64::from(hi - lo + 1);
        if true_rank <= top {
            t.top_with_interval += 1;
            t.top_covered += usize::from(hit);
        }
    }
    for (j, kind) in panel.kind.iter().enumerate() {
        let flagged = r.judges[j].flag != FLAG_OK;
        match kind {
            JudgeKind::Random => {
                t.random_judges += 1;
                t.random_flagged += usize::from(flagged);
            }
            JudgeKind::Normal => {
                t.honest_judges += 1;
                t.honest_flagged += usize::from(flagged);
                if flagged {
                    *t.honest_flags.entry(r.judges[j].flag.clone()).or_default() += 1;
                }
            }
            JudgeKind::Discordant | JudgeKind::Constant => {}
        }
    }
}

#[test]
#[ignore = "a study: run it in release (see the module doc)"]
fn coverage_by_panel_shape() {
    println!(
        "| shape | panels | coverage | top 10 % coverage | mean width | random scorers flagged | honest judges flagged |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for shape in SHAPES {
        let mut t = Tally::default();
        for seed in 1..=shape.seeds {
            let panel = Panel::generate(SynthParams {
                random: 1,
                ..SynthParams::realistic(shape.projects, shape.judges, shape.k, seed)
            });
            measure(&panel, seed, &mut t);
        }
        let share = |a: usize, b: usize| a as f64 / b.max(1) as f64;
        println!(
            "| {} ({}p/{}j/k{}) | {} | {:.3} | {:.3} | {:.1} | {}/{} | {}/{} |",
            shape.name,
            shape.projects,
            shape.judges,
            shape.k,
            shape.seeds,
            share(t.covered, t.with_interval),
            share(t.top_covered, t.top_with_interval),
            t.width / t.with_interval.max(1) as f64,
            t.random_flagged,
            t.random_judges,
            t.honest_flagged,
            t.honest_judges,
        );
        if !t.honest_flags.is_empty() {
            println!(
                "|   honest judges' flags: {:?} | | | | | | |",
                t.honest_flags
            );
        }
    }
}
