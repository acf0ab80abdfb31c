//! What the engine claims about its own certainty, measured on synthetic panels with
//! known truth (test-only; issue 11's baseline). Run with
//! `cargo test --release --lib coverage_by_panel_shape -- --ignored --nocapture`.
//!
//! For each panel shape, over many seeds: the share of ranked projects whose true rank
//! lies in their 90 % rank interval (overall, and among the true top and bottom 10 %), the mean
//! interval width, and the judge flags: how often a judge who scores at random is
//! flagged, and how many honest judges are flagged (any flag but `ok`).

use statrs::distribution::{ContinuousCDF, Normal};

use super::fit::ModelOptions;
use super::joint::{self, JointOptions};
use super::model::Engine;
use super::synth::{JudgeKind, PairParams, Panel, SynthParams};
use super::{CalibrationResult, FLAG_OK, Params, Progress, calibrate_with};

/// A panel shape: projects, judges, reviews per project, per-criterion noise of a typical
/// judge.
struct Shape {
    projects: usize,
    judges: usize,
    k: usize,
    noise: f64,
    seeds: u64,
}

const fn shape(projects: usize, judges: usize, k: usize, noise: f64, seeds: u64) -> Shape {
    Shape {
        projects,
        judges,
        k,
        noise,
        seeds,
    }
}

/// Realistic noise is 0.12 per criterion; 0.25 is a panel where judges disagree a lot
/// (a random scorer then shows only ~1.5x an honest judge's noise).
const SHAPES: &[Shape] = &[
    shape(30, 10, 3, 0.12, 400),
    shape(40, 12, 3, 0.12, 400),
    shape(40, 12, 3, 0.25, 400),
    shape(150, 40, 4, 0.12, 200),
    shape(150, 40, 6, 0.12, 200),
    shape(150, 40, 4, 0.25, 200),
    shape(1000, 200, 5, 0.12, 40),
    shape(2000, 300, 5, 0.12, 20),
    shape(3000, 400, 4, 0.25, 10),
    shape(300, 200, 3, 0.12, 100),
    shape(300, 200, 3, 0.25, 100),
];

#[derive(Default)]
pub(super) struct Tally {
    pub(super) with_interval: usize,
    pub(super) covered: usize,
    pub(super) top_with_interval: usize,
    pub(super) top_covered: usize,
    pub(super) bottom_with_interval: usize,
    pub(super) bottom_covered: usize,
    /// Of the true top (bottom) tenth's misses, those whose interval lies towards the
    /// middle: the project is truly better (worse) than its interval says.
    pub(super) top_missed_inward: usize,
    pub(super) bottom_missed_inward: usize,
    pub(super) width: f64,
    pub(super) random_judges: usize,
    pub(super) random_flagged: usize,
    pub(super) honest_judges: usize,
    pub(super) honest_flagged: usize,
    /// Flags raised on honest judges, by flag.
    pub(super) honest_flags: std::collections::BTreeMap<String, usize>,
    /// Honest judges who compare (ids `c…`), and how many of them were flagged.
    pub(super) honest_comparers: usize,
    pub(super) honest_comparers_flagged: usize,
}

fn measure(panel: &Panel, seed: u64, engine: Engine, t: &mut Tally) {
    measure_with(panel, seed, engine, 200, t);
}

fn measure_with(panel: &Panel, seed: u64, engine: Engine, bootstrap: u32, t: &mut Tally) {
    let params = Params {
        bootstrap,
        ..Params::default_for(seed)
    };
    let r = calibrate_with(
        &panel.input,
        &params,
        &ModelOptions::CHOSEN,
        engine,
        Progress::none(),
    );
    score(panel, &r, t);
}

/// Adds a result's intervals and flags to the tally, against the panel's truth.
pub(super) fn score(panel: &Panel, r: &CalibrationResult, t: &mut Tally) {
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
        if true_rank > ranked.len() - top {
            t.bottom_with_interval += 1;
            t.bottom_covered += usize::from(hit);
            t.bottom_missed_inward += usize::from(true_rank > hi as usize);
        }
        if true_rank <= top {
            t.top_with_interval += 1;
            t.top_covered += usize::from(hit);
            t.top_missed_inward += usize::from(true_rank < lo as usize);
        }
    }
    for (j, kind) in panel.kind.iter().enumerate() {
        // By id: pairwise judges' ids sort before the score judges'.
        let id = &panel.input.judges[j].id;
        let Some(out) = r.judges.iter().find(|o| &o.id == id) else {
            continue;
        };
        let flagged = out.flag != FLAG_OK;
        match kind {
            JudgeKind::Random => {
                t.random_judges += 1;
                t.random_flagged += usize::from(flagged);
            }
            JudgeKind::Normal => {
                t.honest_judges += 1;
                t.honest_flagged += usize::from(flagged);
                if out.comparisons.is_some_and(|c| c > 0) {
                    t.honest_comparers += 1;
                    t.honest_comparers_flagged += usize::from(flagged);
                }
                if flagged {
                    *t.honest_flags.entry(out.flag.clone()).or_default() += 1;
                }
            }
            JudgeKind::Discordant | JudgeKind::Constant => {}
        }
    }
}

/// Every panel of one shape, measured with `engine`.
fn tally(shape: &Shape, engine: Engine) -> Tally {
    let mut t = Tally::default();
    for seed in 1..=shape.seeds {
        let panel = Panel::generate(SynthParams {
            random: 1,
            noise_sd: shape.noise,
            ..SynthParams::realistic(shape.projects, shape.judges, shape.k, seed)
        });
        measure(&panel, seed, engine, &mut t);
    }
    t
}

/// Only the judge flags of every panel of one shape (no draws: flags do not use them).
fn flag_tally(shape: &Shape, engine: Engine, first_seed: u64) -> Tally {
    let mut t = Tally::default();
    for seed in first_seed..first_seed + shape.seeds {
        let panel = Panel::generate(SynthParams {
            random: 1,
            noise_sd: shape.noise,
            ..SynthParams::realistic(shape.projects, shape.judges, shape.k, seed)
        });
        measure_with(&panel, seed, engine, 0, &mut t);
    }
    t
}

/// The judge flags alone (v3's tests, unchanged in v4), on more panels than
/// [`coverage_by_panel_shape`] can afford; `FLAG_SEED=N` starts at another seed.
#[test]
#[ignore = "a study: run it in release (see the module doc)"]
fn flags_by_panel_shape() {
    let first: u64 = std::env::var("FLAG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    println!("| shape | panels | engine | random scorers flagged | honest judges flagged |");
    println!("| --- | --- | --- | --- | --- |");
    for shape in SHAPES {
        {
            let engine = Engine::V4;
            let t = flag_tally(shape, engine, first);
            println!(
                "| {}p/{}j/k{}/noise {} | {} | {engine:?} | {}/{} ({:.2}) | {}/{} {:?} |",
                shape.projects,
                shape.judges,
                shape.k,
                shape.noise,
                shape.seeds,
                t.random_flagged,
                t.random_judges,
                share(t.random_flagged, t.random_judges),
                t.honest_flagged,
                t.honest_judges,
                t.honest_flags,
            );
        }
    }
}

pub(super) fn share(a: usize, b: usize) -> f64 {
    a as f64 / b.max(1) as f64
}

#[test]
#[ignore = "a study: run it in release (see the module doc)"]
fn coverage_by_panel_shape() {
    println!(
        "| shape | panels | engine | coverage | top 10 % | bottom 10 % | mean width | random scorers flagged | honest judges flagged |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for shape in SHAPES {
        for engine in [Engine::V3, Engine::V4] {
            let t = tally(shape, engine);
            println!(
                "| {}p/{}j/k{}/noise {} | {} | {engine:?} | {:.3} | {:.3} | {:.3} | {:.1} | {}/{} | {}/{} {:?} |",
                shape.projects,
                shape.judges,
                shape.k,
                shape.noise,
                shape.seeds,
                share(t.covered, t.with_interval),
                share(t.top_covered, t.top_with_interval),
                share(t.bottom_covered, t.bottom_with_interval),
                t.width / t.with_interval.max(1) as f64,
                t.random_flagged,
                t.random_judges,
                t.honest_flagged,
                t.honest_judges,
                t.honest_flags,
            );
        }
    }
}

// What the current engine claims, asserted on fewer seeded panels than the study
// (deterministic: the same panels and draws on every run): issue 11's band, 88–92 % of
// true ranks inside their 90 % intervals, and at least 85 % at the top and the bottom.

fn assert_band(t: &Tally) {
    let c = share(t.covered, t.with_interval);
    assert!((0.88..=0.92).contains(&c), "coverage {c}");
    let top = share(t.top_covered, t.top_with_interval);
    assert!(top >= 0.85, "top 10 % coverage {top}");
    let bottom = share(t.bottom_covered, t.bottom_with_interval);
    assert!(bottom >= 0.85, "bottom 10 % coverage {bottom}");
}

/// A small event (40 projects, 12 judges, 3 reviews each, one random scorer): intervals
/// no longer too wide (v2: 0.945, v3: 0.921 on the study's 400 panels).
#[test]
fn small_panels_get_intervals_that_cover_about_ninety_percent() {
    assert_band(&tally(&shape(40, 12, 3, 0.12, 40), Engine::V5));
}

/// Judges who disagree a lot (per-criterion noise 0.25): the true top and bottom tenth,
/// where prizes are decided, no longer under-covered (v3: 0.849 and 0.821 on the
/// study's 200 panels of 150 projects).
#[test]
fn noisy_panels_cover_the_top_and_bottom_tenth() {
    assert_band(&tally(&shape(150, 40, 4, 0.25, 20), Engine::V5));
}

/// A sparse event (300 projects, 200 judges, 3 reviews each): intervals no longer too
/// narrow (v2: 0.861, v3 0.921 too wide), and honest judges with a few equal totals no longer called
/// constant (v2: 9 honest judges in 1,000 flagged).
#[test]
fn sparse_panels_get_intervals_that_cover_about_ninety_percent_and_few_false_flags() {
    let t = tally(&shape(300, 200, 3, 0.12, 20), Engine::V5);
    assert_band(&t);
    // The study's 100 panels: 1.5 per 1,000; these 20 draw unluckier judges.
    assert!(
        t.honest_flagged * 400 <= t.honest_judges,
        "{}/{} honest judges flagged: {:?}",
        t.honest_flagged,
        t.honest_judges,
        t.honest_flags
    );
}

/// A mid-sized event with six reviews per project: a judge who scores at random is
/// caught on most panels, and honest judges are flagged at most about once in 500.
#[test]
fn random_scorers_are_caught_and_honest_judges_rarely_flagged() {
    let t = tally(&shape(150, 40, 6, 0.12, 20), Engine::V5);
    assert!(
        t.random_flagged * 10 >= t.random_judges * 8,
        "random scorers flagged {}/{}",
        t.random_flagged,
        t.random_judges
    );
    assert!(
        t.honest_flagged * 250 <= t.honest_judges,
        "{}/{} honest judges flagged",
        t.honest_flagged,
        t.honest_judges
    );
    assert_band(&t);
}

/// What any test of "this judge's scores follow quality" could do at one false flag per
/// 500 honest judges, given the *true* qualities (which no engine has): for every judge,
/// the Fisher z of the correlation of its scores with the true quality; the threshold is
/// the 1-in-500 lower quantile of honest judges' z over all panels of the shape, and the
/// power is the share of random scorers below it.
#[test]
#[ignore = "a study: run it in release (see the module doc)"]
fn oracle_flag_power() {
    println!("| shape | panels | oracle: random scorers below the honest 1/500 quantile |");
    println!("| --- | --- | --- |");
    for shape in SHAPES {
        let (mut honest, mut random) = (Vec::new(), Vec::new());
        for seed in 1..=shape.seeds.max(400) {
            let panel = Panel::generate(SynthParams {
                random: 1,
                noise_sd: shape.noise,
                ..SynthParams::realistic(shape.projects, shape.judges, shape.k, seed)
            });
            let mut by_judge: Vec<Vec<(f64, f64)>> = vec![Vec::new(); panel.kind.len()];
            for r in &panel.input.reviews {
                let j: usize = r.judge[1..].parse().expect("synthetic judge id");
                let p: usize = r.project[1..].parse().expect("synthetic project id");
                by_judge[j].push((panel.true_quality[p], r.score));
            }
            for (j, pairs) in by_judge.iter().enumerate() {
                let n = pairs.len() as f64;
                if n < 4.0 {
                    continue;
                }
                let mx = pairs.iter().map(|p| p.0).sum::<f64>() / n;
                let my = pairs.iter().map(|p| p.1).sum::<f64>() / n;
                let sxx: f64 = pairs.iter().map(|p| (p.0 - mx).powi(2)).sum();
                let syy: f64 = pairs.iter().map(|p| (p.1 - my).powi(2)).sum();
                let sxy: f64 = pairs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
                if sxx <= 0.0 || syy <= 0.0 {
                    continue;
                }
                let r = (sxy / (sxx * syy).sqrt()).clamp(-0.999_999, 0.999_999);
                let z = r.atanh() * (n - 3.0).sqrt();
                match panel.kind[j] {
                    JudgeKind::Normal => honest.push(z),
                    JudgeKind::Random => random.push(z),
                    _ => {}
                }
            }
        }
        honest.sort_by(f64::total_cmp);
        let cut = honest[honest.len() / 500];
        let caught = random.iter().filter(|&&z| z < cut).count();
        println!(
            "| {}p/{}j/k{}/noise {} | {} | {}/{} ({:.2}) |",
            shape.projects,
            shape.judges,
            shape.k,
            shape.noise,
            shape.seeds.max(400),
            caught,
            random.len(),
            share(caught, random.len()),
        );
    }
}

// Pairwise and mixed panels (issue 26, engine v6): `cargo test --release --lib
// coverage_of_pairwise_and_mixed_panels -- --ignored --nocapture`.

/// A panel shape with comparisons: projects; score judges and reviews per project (0: no
/// scores); pairwise judges with `min..=max` comparisons each; one pairwise judge clicks
/// at random.
struct PairShape {
    name: &'static str,
    projects: usize,
    score_judges: usize,
    k: usize,
    pair_judges: usize,
    min: usize,
    max: usize,
    seeds: u64,
}

const PAIR_SHAPES: &[PairShape] = &[
    PairShape {
        name: "gavel",
        projects: 200,
        score_judges: 0,
        k: 0,
        pair_judges: 40,
        min: 15,
        max: 25,
        seeds: 40,
    },
    PairShape {
        name: "small pairwise",
        projects: 40,
        score_judges: 0,
        k: 0,
        pair_judges: 12,
        min: 15,
        max: 25,
        seeds: 100,
    },
    PairShape {
        name: "small mixed",
        projects: 40,
        score_judges: 12,
        k: 3,
        pair_judges: 8,
        min: 10,
        max: 15,
        seeds: 100,
    },
    PairShape {
        name: "gavel mixed",
        projects: 200,
        score_judges: 40,
        k: 3,
        pair_judges: 40,
        min: 15,
        max: 25,
        seeds: 20,
    },
];

fn pair_panel(shape: &PairShape, seed: u64) -> Panel {
    let pairs = PairParams {
        min: shape.min,
        max: shape.max,
        random: 1,
        ..PairParams::gavel(shape.pair_judges, seed)
    };
    if shape.score_judges == 0 {
        Panel::generate_pairwise(shape.projects, pairs)
    } else {
        let mut panel = Panel::generate(SynthParams::realistic(
            shape.projects,
            shape.score_judges,
            shape.k,
            seed,
        ));
        panel.add_comparisons(pairs);
        panel
    }
}

/// What a pairwise study saw beyond the tally: the comparison tests' p-values (as used
/// and as the model alone gives them) and reliabilities of honest and random judges, and
/// an oracle's statistic for each (see [`oracle_z`]).
#[derive(Default)]
struct PairSeen {
    honest_p: Vec<f64>,
    honest_model_p: Vec<f64>,
    random_p: Vec<f64>,
    honest_eta: Vec<f64>,
    random_eta: Vec<f64>,
    oracle_honest: Vec<f64>,
    oracle_random: Vec<f64>,
    gamma: Vec<f64>,
}

/// The oracle's test of a comparison judge: the standardised log-likelihood of its choices
/// under the *true* qualities and a typical honest judge's perception noise (0.1: `P(a
/// beats b) = Φ((q_a − q_b) / (0.1 √2))`), which no engine has.
fn oracle_z(panel: &Panel, id: &str) -> Option<f64> {
    let normal = Normal::standard();
    let index = |p: &str| -> usize { p[1..].parse().expect("synthetic project id") };
    let (mut ll, mut mean, mut var, mut n) = (0.0, 0.0, 0.0, 0usize);
    for c in panel.input.comparisons.iter().filter(|c| c.judge == id) {
        let d = panel.true_quality[index(&c.better)] - panel.true_quality[index(&c.worse)];
        let p = normal
            .cdf(d / (0.1 * std::f64::consts::SQRT_2))
            .clamp(1e-9, 1.0 - 1e-9);
        let (lp, lq) = (p.ln(), (1.0 - p).ln());
        ll += lp;
        mean += p * lp + (1.0 - p) * lq;
        var += p * (1.0 - p) * (lp - lq).powi(2);
        n += 1;
    }
    (n >= joint::MIN_FLAG_COMPARISONS && var > 0.0).then(|| (ll - mean) / var.sqrt())
}

/// The joint engine's options for a study: `PAIR_ENGINE=6` for v6, `7` for v7, else v8;
/// then `PAIR_PRIOR_A`, `PAIR_NULL=model|population`, `PAIR_ONE_FAMILY=0|1`,
/// `PAIR_DRAW_SCALE`, `PAIR_RECALIBRATE=0|1`, `PAIR_DRAW_POWER`, `PAIR_FLAG_RATE` (the
/// flags' rate per judge tested, without scores) override single options.
fn study_options() -> JointOptions {
    let var = |k: &str| std::env::var(k).ok();
    let mut o = match var("PAIR_ENGINE").as_deref() {
        Some("6") => JointOptions::V6,
        Some("7") => JointOptions::V7,
        _ => JointOptions::V8,
    };
    if let Some(a) = var("PAIR_PRIOR_A").and_then(|s| s.parse().ok()) {
        o.reliability_prior = (a, 1.0);
    }
    if let Some(v) = var("PAIR_NULL") {
        o.population_null = v == "population";
    }
    if let Some(v) = var("PAIR_ONE_FAMILY") {
        o.one_family = v == "1";
    }
    if let Some(v) = var("PAIR_DRAW_SCALE").and_then(|s| s.parse().ok()) {
        o.draw_scale = v;
    }
    if let Some(v) = var("PAIR_RECALIBRATE") {
        o.recalibrate = v == "1";
    }
    if let Some(v) = var("PAIR_SHARPEN") {
        o.sharpen = v == "1";
    }
    if let Some(v) = var("PAIR_DRAW_POWER").and_then(|s| s.parse().ok()) {
        o.draw_power = v;
    }
    if let Some(v) = var("PAIR_FLAG_RATE").and_then(|s| s.parse().ok()) {
        o.flag_rate_per_judge_without_scores = v;
    }
    o
}

fn pair_tally(shape: &PairShape, first_seed: u64, seeds: u64, bootstrap: u32) -> Tally {
    pair_study(shape, first_seed, seeds, bootstrap, &JointOptions::V8).0
}

fn pair_study(
    shape: &PairShape,
    first_seed: u64,
    seeds: u64,
    bootstrap: u32,
    opts: &JointOptions,
) -> (Tally, PairSeen) {
    let mut t = Tally::default();
    let mut seen = PairSeen::default();
    for seed in first_seed..first_seed + seeds {
        let panel = pair_panel(shape, seed);
        let params = Params {
            bootstrap,
            ..Params::default_for(seed)
        };
        let (r, trace) =
            joint::calibrate_joint_traced(&panel.input, &params, Progress::none(), opts);
        score(&panel, &r, &mut t);
        seen.gamma.push(trace.gamma);
        for (id, p, model_p) in &trace.judges {
            let Some(j) = panel.input.judges.iter().position(|x| &x.id == id) else {
                continue;
            };
            let eta = r
                .judges
                .iter()
                .find(|o| &o.id == id)
                .and_then(|o| o.reliability);
            let oracle = oracle_z(&panel, id);
            match panel.kind[j] {
                JudgeKind::Normal => {
                    seen.honest_p.extend(p);
                    seen.honest_model_p.extend(model_p);
                    seen.honest_eta.extend(eta);
                    seen.oracle_honest.extend(oracle);
                }
                JudgeKind::Random => {
                    seen.random_p.extend(p);
                    seen.random_eta.extend(eta);
                    seen.oracle_random.extend(oracle);
                }
                _ => {}
            }
        }
    }
    (t, seen)
}

fn mean_of(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Share of `v` at or under `x`.
fn at_most(v: &[f64], x: f64) -> f64 {
    share(v.iter().filter(|&&p| p <= x).count(), v.len())
}

#[test]
#[ignore = "a study: run it in release (see the module doc)"]
fn coverage_of_pairwise_and_mixed_panels() {
    let first: u64 = std::env::var("PAIR_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    // `PAIR_SEEDS=N` measures N panels per shape, `PAIR_SHAPE=word` only the shape of that
    // name, or else the shapes whose name holds it (`PAIR_SHAPE=small`: two shapes).
    let seeds: Option<u64> = std::env::var("PAIR_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok());
    let only = std::env::var("PAIR_SHAPE").unwrap_or_default();
    let opts = study_options();
    println!("{opts:?}");
    println!(
        "| shape | panels | coverage | top 10 % | bottom 10 % | mean width | random clickers flagged | honest judges flagged | honest comparers flagged |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let mut extra = Vec::new();
    let exact = PAIR_SHAPES.iter().any(|s| s.name == only);
    for shape in PAIR_SHAPES.iter().filter(|s| {
        if exact {
            s.name == only
        } else {
            s.name.contains(&only)
        }
    }) {
        let n = seeds.unwrap_or(shape.seeds);
        let (t, seen) = pair_study(shape, first, n, 200, &opts);
        println!(
            "| {} ({}p, {}j×k{} + {}×{}–{}) | {} | {:.3} | {:.3} | {:.3} | {:.1} | {}/{} | {}/{} {:?} | {}/{} |",
            shape.name,
            shape.projects,
            shape.score_judges,
            shape.k,
            shape.pair_judges,
            shape.min,
            shape.max,
            n,
            share(t.covered, t.with_interval),
            share(t.top_covered, t.top_with_interval),
            share(t.bottom_covered, t.bottom_with_interval),
            t.width / t.with_interval.max(1) as f64,
            t.random_flagged,
            t.random_judges,
            t.honest_flagged,
            t.honest_judges,
            t.honest_flags,
            t.honest_comparers_flagged,
            t.honest_comparers,
        );
        // The oracle at one false flag in 300 honest judges.
        let mut honest = seen.oracle_honest.clone();
        honest.sort_by(f64::total_cmp);
        let cut = honest
            .get(honest.len() / 300)
            .copied()
            .unwrap_or(f64::NEG_INFINITY);
        let caught = seen.oracle_random.iter().filter(|&&z| z < cut).count();
        extra.push(format!(
            "{}: top tenth missed {} ({} towards the middle), bottom tenth missed {} ({} towards the middle); honest comparers' p used ≤0.01/0.05/0.2/0.5: {:.3}/{:.3}/{:.3}/{:.3} (model's {:.3}/{:.3}/{:.3}/{:.3}, n {}); random p ≤0.01/0.05: {:.2}/{:.2}; η honest {:.3} random {:.3}; γ {:.3} ({:.3}–{:.3}); oracle at 1/300: {}/{} ({:.2})",
            shape.name,
            t.top_with_interval - t.top_covered,
            t.top_missed_inward,
            t.bottom_with_interval - t.bottom_covered,
            t.bottom_missed_inward,
            at_most(&seen.honest_p, 0.01),
            at_most(&seen.honest_p, 0.05),
            at_most(&seen.honest_p, 0.2),
            at_most(&seen.honest_p, 0.5),
            at_most(&seen.honest_model_p, 0.01),
            at_most(&seen.honest_model_p, 0.05),
            at_most(&seen.honest_model_p, 0.2),
            at_most(&seen.honest_model_p, 0.5),
            seen.honest_p.len(),
            at_most(&seen.random_p, 0.01),
            at_most(&seen.random_p, 0.05),
            mean_of(&seen.honest_eta),
            mean_of(&seen.random_eta),
            mean_of(&seen.gamma),
            seen.gamma.iter().copied().fold(f64::INFINITY, f64::min),
            seen.gamma.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            caught,
            seen.oracle_random.len(),
            share(caught, seen.oracle_random.len()),
        ));
    }
    for line in extra {
        println!("{line}");
    }
}

// Issue 26's bands for engine v7, asserted on seeded panels (deterministic: the same
// panels and draws on every run). The 200-project shapes are studies (`#[ignore]`):
// `cargo test --release -p verdict --lib pairwise_bands_on_gavel_panels -- --ignored`.

fn pair_shape(name: &str) -> &'static PairShape {
    PAIR_SHAPES
        .iter()
        .find(|s| s.name == name)
        .expect("a pairwise shape")
}

/// Comparisons only, 40 projects, 12 judges × 15–25 comparisons, one random clicker:
/// intervals no longer too wide (v6: 0.93), honest judges rarely flagged, and the clicker
/// caught on 19 of these 30 panels, 0.9 of the oracle's 21 (v7, at a fixed false-discovery
/// rate per panel: 17).
#[test]
fn small_pairwise_panels_cover_about_ninety_percent() {
    let t = pair_tally(pair_shape("small pairwise"), 1, SMALL_BAND_PANELS, 200);
    assert_band(&t);
    assert!(
        t.honest_flagged * 300 <= t.honest_judges,
        "{}/{} honest judges flagged",
        t.honest_flagged,
        t.honest_judges
    );
    assert!(
        t.random_flagged >= 19,
        "{}/{} random clickers flagged",
        t.random_flagged,
        t.random_judges
    );
}

/// Scores and comparisons, 40 projects: 12 score judges (k = 3) and 8 judges × 10–15
/// comparisons, one of them clicking at random: at most one honest judge in 300 flagged
/// (v6: 7 in 570 on panels 1–30, all `discordant`), intervals in the band.
#[test]
fn small_mixed_panels_flag_few_honest_judges_and_cover_about_ninety_percent() {
    let t = pair_tally(pair_shape("small mixed"), 1, SMALL_BAND_PANELS, 200);
    assert!(
        t.honest_flagged * 300 <= t.honest_judges,
        "{}/{} honest judges flagged: {:?}",
        t.honest_flagged,
        t.honest_judges,
        t.honest_flags
    );
    assert_band(&t);
}

/// Panels per small shape in the band tests.
const SMALL_BAND_PANELS: u64 = 30;

/// The Gavel-sized shapes (200 projects): overall coverage in the band. Not asserted, as
/// not met (see the module doc of `mod.rs`): the true top and bottom tenth (0.80–0.85) and,
/// on mixed panels, the honest judges' flags (8 in 2370 on 30 panels, 1 in 296).
#[test]
#[ignore = "a study: run it in release (see the comment above)"]
fn pairwise_bands_on_gavel_panels() {
    for name in ["gavel", "gavel mixed"] {
        let t = pair_tally(pair_shape(name), 1, 10, 200);
        let c = share(t.covered, t.with_interval);
        assert!((0.88..=0.92).contains(&c), "{name}: coverage {c}");
    }
}
