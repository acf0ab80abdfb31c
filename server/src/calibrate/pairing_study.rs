//! Which next pair teaches the ranking most (issue 26), measured on Gavel-like panels
//! (test-only). Run with
//! `cargo test --release -p verdict --lib pairs_by_policy -- --ignored --nocapture --test-threads 1`
//! (`PAIRING_SEEDS=N` panels, 10 by default; `PAIRING_SEED=S` the first seed, 1 by default).
//!
//! Each panel: 200 projects (qualities as `synth.rs` draws them; table order has nothing to
//! do with quality), 40 judges making 15–25 comparisons each, two of them clicking at
//! random, the others perceiving a project as `q + σ_k ε` (`σ_k = 0.1 · exp(0.35 z)`, as
//! `synth::PairParams::gavel`). The judges take turns, one move each, so every choice sees
//! the comparisons made so far. Judge `k` of `J` starts at table `k·N/J` (as
//! `route::start`), and every judge walks the same round of the floor. Each policy runs on
//! the same panels, the same judges and the same numbers of comparisons; the comparisons
//! are then calibrated by the engine as it is (`calibrate`: v7 since issue 26's second
//! step; 200 draws) and measured against the truth (`coverage::score`).
//!
//! Policies, for the project a judge goes to next after `previous`:
//!
//! - *walk*: the next unvisited table on the round (the route before this study);
//! - *random*: any project the judge has not visited, at random;
//! - *fewest W*: among the next `W` unvisited tables, the one compared least so far;
//! - *gain W*: among the next `W` unvisited tables, the one whose comparison with
//!   `previous` tells most about the ranking (`pairing::Estimate::information`, the
//!   estimate refreshed after every comparison);
//! - *podium W*: as *gain W*, weighted by how uncertain it is whether either project is in
//!   the top 3;
//! - *gain anywhere*: as *gain*, among every project the judge has not visited (Gavel's
//!   choice, which sends the judge anywhere on the floor).

use statrs::distribution::{ContinuousCDF, Normal};

use super::coverage::{Tally, score, share};
use super::pairing::Estimate;
use super::rng::{Rng, STREAM_SYNTH};
use super::synth::{JudgeKind, Panel, SynthParams, comparison_judge_id, kendall_tau, project_id};
use super::types::{CalibrationResult, ComparisonIn, JudgeIn, Params};

const PROJECTS: usize = 200;
const JUDGES: usize = 40;
const COMPARISONS: (usize, usize) = (15, 25);
const RANDOM_CLICKERS: usize = 2;
const NOISE_SD: f64 = 0.1;

#[derive(Clone, Copy, Debug)]
enum Policy {
    Walk,
    Random,
    Fewest(usize),
    Gain(usize),
    Podium(usize),
    GainAnywhere,
}

impl Policy {
    fn name(self) -> String {
        match self {
            Policy::Walk => "walk".into(),
            Policy::Random => "random".into(),
            Policy::Fewest(w) => format!("fewest {w}"),
            Policy::Gain(w) => format!("gain {w}"),
            Policy::Podium(w) => format!("podium {w}"),
            Policy::GainAnywhere => "gain anywhere".into(),
        }
    }
}

const POLICIES: &[Policy] = &[
    Policy::Walk,
    Policy::Random,
    Policy::Fewest(5),
    Policy::Gain(3),
    Policy::Gain(5),
    Policy::Podium(5),
    Policy::GainAnywhere,
];

/// A panel whose comparisons one policy chose.
struct Walked {
    panel: Panel,
    /// Tables between the two projects of each comparison, summed (the shorter way round).
    tables: usize,
    /// Distinct pairs compared.
    distinct: usize,
}

/// How uncertain it is whether each project is in the top 3: `π (1 − π)`, `π` the chance
/// its quality is above the midpoint of the third and fourth best estimates.
fn podium_uncertainty(e: &Estimate) -> Vec<f64> {
    let mut sorted = e.mean.clone();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let cut = (sorted[2] + sorted[3]) / 2.0;
    e.mean
        .iter()
        .zip(&e.var)
        .map(|(m, v)| {
            let pi = Normal::standard().cdf((m - cut) / v.sqrt());
            pi * (1.0 - pi)
        })
        .collect()
}

fn simulate(seed: u64, policy: Policy) -> Walked {
    let n = PROJECTS;
    let mut panel = Panel::generate(SynthParams {
        judges: 0,
        k: 0,
        ..SynthParams::realistic(n, 0, 0, seed)
    });
    // The judges are the same under every policy; the outcomes and random choices are
    // drawn from streams of their own.
    let mut judges = Rng::stream(seed, STREAM_SYNTH + 10);
    let noise: Vec<f64> = (0..JUDGES)
        .map(|_| NOISE_SD * (0.35 * judges.normal()).exp())
        .collect();
    let mut order: Vec<usize> = (0..JUDGES).collect();
    judges.shuffle(&mut order);
    let mut kind = [JudgeKind::Normal; JUDGES];
    for &k in order.iter().take(RANDOM_CLICKERS) {
        kind[k] = JudgeKind::Random;
    }
    let todo: Vec<usize> = (0..JUDGES)
        .map(|_| COMPARISONS.0 + judges.index(COMPARISONS.1 - COMPARISONS.0 + 1))
        .collect();
    let mut outcomes = Rng::stream(seed, STREAM_SYNTH + 11);
    let mut choices = Rng::stream(seed, STREAM_SYNTH + 12);

    let mut seen = vec![vec![false; n]; JUDGES];
    let mut at: Vec<Option<usize>> = vec![None; JUDGES];
    let mut done = vec![0usize; JUDGES];
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    let mut compared = vec![0usize; n];
    // Refitted when a comparison has been made since.
    let mut estimate: Option<Estimate> = None;
    let mut tables = 0usize;
    loop {
        let mut moved = false;
        for k in 0..JUDGES {
            if done[k] >= todo[k] {
                continue;
            }
            let next = match at[k] {
                None => Some(k * n / JUDGES),
                Some(prev) => {
                    let mine = &seen[k];
                    let ahead: Vec<usize> = (1..n)
                        .map(|s| (prev + s) % n)
                        .filter(|&p| !mine[p])
                        .collect();
                    let window = |w: usize| &ahead[..w.min(ahead.len())];
                    let guided = matches!(
                        policy,
                        Policy::Gain(_) | Policy::Podium(_) | Policy::GainAnywhere
                    );
                    if guided && estimate.is_none() {
                        estimate = Some(Estimate::fit(n, &pairs));
                    }
                    let e = estimate.as_ref();
                    match policy {
                        Policy::Walk => ahead.first().copied(),
                        Policy::Random => {
                            (!ahead.is_empty()).then(|| ahead[choices.index(ahead.len())])
                        }
                        Policy::Fewest(w) => window(w).iter().copied().min_by_key(|&p| compared[p]),
                        Policy::Gain(w) => e.and_then(|e| e.most_informative(prev, window(w))),
                        Policy::GainAnywhere => e.and_then(|e| e.most_informative(prev, &ahead)),
                        Policy::Podium(w) => e.and_then(|e| {
                            let u = podium_uncertainty(e);
                            let mut best: Option<(usize, f64)> = None;
                            for &c in window(w) {
                                let v = e.information(prev, c) * (0.01 + u[prev] + u[c]);
                                if best.is_none_or(|(_, b)| v > b) {
                                    best = Some((c, v));
                                }
                            }
                            best.map(|(c, _)| c)
                        }),
                    }
                }
            };
            let Some(p) = next else { continue };
            moved = true;
            seen[k][p] = true;
            if let Some(prev) = at[k] {
                let q = &panel.true_quality;
                let current_better = match kind[k] {
                    JudgeKind::Random => outcomes.unit() < 0.5,
                    _ => {
                        q[p] + noise[k] * outcomes.normal() > q[prev] + noise[k] * outcomes.normal()
                    }
                };
                let (better, worse) = if current_better { (p, prev) } else { (prev, p) };
                pairs.push((better, worse));
                compared[better] += 1;
                compared[worse] += 1;
                estimate = None;
                done[k] += 1;
                let d = p.abs_diff(prev);
                tables += d.min(n - d);
                panel.input.comparisons.push(ComparisonIn {
                    judge: comparison_judge_id(k),
                    better: project_id(better),
                    worse: project_id(worse),
                });
            }
            at[k] = Some(p);
        }
        if !moved {
            break;
        }
    }
    for k in 0..JUDGES {
        panel.input.judges.push(JudgeIn {
            id: comparison_judge_id(k),
        });
        panel.severity.push(0.0);
        panel.scale.push(1.0);
        panel.noise.push(noise[k]);
        panel.kind.push(kind[k]);
    }
    let mut distinct: Vec<(usize, usize)> =
        pairs.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    distinct.sort_unstable();
    distinct.dedup();
    Walked {
        panel,
        tables,
        distinct: distinct.len(),
    }
}

/// Kendall τ of the fitted qualities against the truth, and how many of the true top 3
/// are in the fitted top 3.
fn ranking(panel: &Panel, r: &CalibrationResult) -> (f64, usize) {
    let mut ranked: Vec<(f64, f64, &str)> = r
        .projects
        .iter()
        .filter_map(|p| Some((p.quality?, panel.truth_of(&p.id)?, p.id.as_str())))
        .collect();
    let fitted: Vec<f64> = ranked.iter().map(|x| x.0).collect();
    let truth: Vec<f64> = ranked.iter().map(|x| x.1).collect();
    let tau = kendall_tau(&fitted, &truth);
    let mut true_order: Vec<usize> = (0..panel.true_quality.len()).collect();
    true_order.sort_by(|&a, &b| panel.true_quality[b].total_cmp(&panel.true_quality[a]));
    let true_top: Vec<String> = true_order.iter().take(3).map(|&p| project_id(p)).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    let found = ranked
        .iter()
        .take(3)
        .filter(|x| true_top.iter().any(|t| t == x.2))
        .count();
    (tau, found)
}

#[derive(Default)]
struct Row {
    tau: Vec<f64>,
    top3: usize,
    tally: Tally,
    tables: usize,
    comparisons: usize,
    distinct: usize,
}

#[test]
#[ignore = "a study: run it in release (see the module doc)"]
fn pairs_by_policy() {
    let var = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let first = var("PAIRING_SEED", 1);
    let seeds = var("PAIRING_SEEDS", 10);
    let mut rows: Vec<Row> = POLICIES.iter().map(|_| Row::default()).collect();
    for seed in first..first + seeds {
        for (policy, row) in POLICIES.iter().zip(rows.iter_mut()) {
            let w = simulate(seed, *policy);
            let params = Params {
                bootstrap: 200,
                ..Params::default_for(seed)
            };
            let r = super::calibrate(&w.panel.input, &params);
            let (tau, found) = ranking(&w.panel, &r);
            row.tau.push(tau);
            row.top3 += found;
            score(&w.panel, &r, &mut row.tally);
            row.tables += w.tables;
            row.comparisons += w.panel.input.comparisons.len();
            row.distinct += w.distinct;
        }
    }
    let walk: Vec<f64> = rows[0].tau.clone();
    println!(
        "| policy | panels | Kendall τ | τ above the walk's | true top 3 in the fitted top 3 | coverage | top 10 % | bottom 10 % | mean width | random clickers flagged | honest judges flagged | tables per comparison | distinct pairs |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (policy, row) in POLICIES.iter().zip(&rows) {
        let n = row.tau.len();
        let mean = row.tau.iter().sum::<f64>() / n as f64;
        let (lo, hi) = row
            .tau
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &t| {
                (l.min(t), h.max(t))
            });
        let above = row.tau.iter().zip(&walk).filter(|(a, b)| a > b).count();
        let t = &row.tally;
        println!(
            "| {} | {n} | {mean:.3} ({lo:.3}–{hi:.3}) | {above}/{n} | {:.2} | {:.3} | {:.3} | {:.3} | {:.1} | {}/{} | {}/{} | {:.1} | {:.2} |",
            policy.name(),
            row.top3 as f64 / n as f64,
            share(t.covered, t.with_interval),
            share(t.top_covered, t.top_with_interval),
            share(t.bottom_covered, t.bottom_with_interval),
            t.width / t.with_interval.max(1) as f64,
            t.random_flagged,
            t.random_judges,
            t.honest_flagged,
            t.honest_judges,
            row.tables as f64 / row.comparisons.max(1) as f64,
            share(row.distinct, row.comparisons),
        );
    }
    println!();
    println!(
        "Kendall τ by seed ({first}..={}):",
        first + seeds.saturating_sub(1)
    );
    for (policy, row) in POLICIES.iter().zip(&rows) {
        let taus: Vec<String> = row.tau.iter().map(|t| format!("{t:.3}")).collect();
        println!("| {} | {} |", policy.name(), taus.join(" | "));
    }
}
