//! Synthetic judging panels with known truth, for tests and benchmarks.
//!
//! Generative model (all on the 0..1 score scale):
//! - true quality `q_p ~ N(0.55, 0.15²)`;
//! - judge `j`: severity `b_j ~ N(0, severity_sd²)`, scale
//!   `s_j = exp(scale_sd · N(0,1))`, noise `σ_j = noise_sd · exp(0.35 · N(0,1))`
//!   (judges differ in how careful they are);
//! - latent score `m_pj = 0.55 + s_j (q_p - 0.55) + b_j`; a *discordant*
//!   judge uses `0.55 - (q_p - 0.55) + b_j` (reversed), a *constant* judge
//!   gives 4/5 on everything;
//! - the rubric has 3 criteria scored 1..5: criterion `c = clamp(round(1 +
//!   4 (m_pj + σ_j ε_c)), 1, 5)`, and the review score is
//!   `(Σ c - 3) / 12`, i.e. 13 possible values, so ties happen as in real
//!   events.
//!
//! Assignment: project `i` is reviewed by judges `o + i` and `o + i + 1`
//! (mod J, `o` a seeded offset), which chains all judges together whenever
//! `k ≥ 2` and `projects ≥ judges - 1`; the other `k - 2` judges are the
//! least-loaded ones, ties broken at random.

use std::time::Instant;

use super::rng::{Rng, STREAM_SYNTH};
use super::types::{CalibrationInput, ComparisonIn, JudgeIn, Params, ProjectIn, ReviewIn};

const QUALITY_MEAN: f64 = 0.55;
const QUALITY_SD: f64 = 0.15;
const NOISE_SPREAD: f64 = 0.35;
const CRITERIA: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SynthParams {
    pub projects: usize,
    pub judges: usize,
    /// Judges per project (capped at `judges`).
    pub k: usize,
    pub seed: u64,
    pub severity_sd: f64,
    /// Per-criterion noise sd of a typical judge.
    pub noise_sd: f64,
    /// Log-sd of the per-judge scale (0 = all judges use the same spread).
    pub scale_sd: f64,
    /// Number of judges scoring in reverse.
    pub discordant: usize,
    /// Number of judges giving the same score to everything.
    pub constant: usize,
    /// Number of judges scoring at random: blind to quality, but with the spread of an
    /// honest judge's scores (so only their disagreement with the others gives them away).
    pub random: usize,
}

impl SynthParams {
    /// A panel like a real event: severity sd 0.1, per-criterion noise 0.12,
    /// scale log-sd 0.15, no pathological judges.
    pub fn realistic(projects: usize, judges: usize, k: usize, seed: u64) -> Self {
        SynthParams {
            projects,
            judges,
            k,
            seed,
            severity_sd: 0.1,
            noise_sd: 0.12,
            scale_sd: 0.15,
            discordant: 0,
            constant: 0,
            random: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JudgeKind {
    Normal,
    Discordant,
    Constant,
    Random,
}

/// A generated panel and its truth. Vectors are indexed like
/// `input.projects` / `input.judges`.
#[derive(Clone, Debug)]
pub struct Panel {
    pub input: CalibrationInput,
    pub true_quality: Vec<f64>,
    pub severity: Vec<f64>,
    pub scale: Vec<f64>,
    pub noise: Vec<f64>,
    pub kind: Vec<JudgeKind>,
}

pub fn project_id(i: usize) -> String {
    format!("p{i:05}")
}

pub fn judge_id(j: usize) -> String {
    format!("j{j:04}")
}

impl Panel {
    pub fn generate(sp: SynthParams) -> Panel {
        let mut rng = Rng::stream(sp.seed, STREAM_SYNTH);
        let np = sp.projects;
        let nj = sp.judges;
        let true_quality: Vec<f64> = (0..np)
            .map(|_| QUALITY_MEAN + QUALITY_SD * rng.normal())
            .collect();
        let severity: Vec<f64> = (0..nj).map(|_| sp.severity_sd * rng.normal()).collect();
        let scale: Vec<f64> = (0..nj)
            .map(|_| (sp.scale_sd * rng.normal()).exp())
            .collect();
        let noise: Vec<f64> = (0..nj)
            .map(|_| sp.noise_sd * (NOISE_SPREAD * rng.normal()).exp())
            .collect();
        // Pathological judges are a random subset.
        let mut order: Vec<usize> = (0..nj).collect();
        rng.shuffle(&mut order);
        let mut kind = vec![JudgeKind::Normal; nj];
        for (t, &j) in order.iter().enumerate() {
            if t < sp.discordant {
                kind[j] = JudgeKind::Discordant;
            } else if t < sp.discordant + sp.constant {
                kind[j] = JudgeKind::Constant;
            } else if t < sp.discordant + sp.constant + sp.random {
                kind[j] = JudgeKind::Random;
            }
        }

        let k = sp.k.min(nj);
        let mut load = vec![0usize; nj];
        let mut reviews = Vec::with_capacity(np * k);
        let offset = rng.index(nj.max(1));
        let mut chosen: Vec<usize> = Vec::with_capacity(k);
        for (p, &q) in true_quality.iter().enumerate() {
            chosen.clear();
            for t in 0..k.min(2) {
                chosen.push((offset + p + t) % nj);
            }
            while chosen.len() < k {
                // Least loaded judge not yet chosen; random tie-break.
                let tie: Vec<u64> = (0..nj).map(|_| rng.next_u64()).collect();
                let pick = (0..nj)
                    .filter(|j| !chosen.contains(j))
                    .min_by_key(|&j| (load[j], tie[j]));
                match pick {
                    Some(j) => chosen.push(j),
                    None => break,
                }
            }
            for &j in &chosen {
                load[j] += 1;
                let latent = match kind[j] {
                    JudgeKind::Normal => QUALITY_MEAN + scale[j] * (q - QUALITY_MEAN) + severity[j],
                    JudgeKind::Discordant => QUALITY_MEAN - (q - QUALITY_MEAN) + severity[j],
                    JudgeKind::Constant => 0.75,
                    // Blind to quality but plausible: spread like an honest judge's
                    // scores around the same mean. Draws only for random judges, so
                    // panels without them are unchanged.
                    JudgeKind::Random => QUALITY_MEAN + QUALITY_SD * rng.normal() + severity[j],
                };
                let mut total = 0.0;
                for _ in 0..CRITERIA {
                    let e = if kind[j] == JudgeKind::Constant {
                        0.0
                    } else {
                        noise[j] * rng.normal()
                    };
                    total += (1.0 + 4.0 * (latent + e)).round().clamp(1.0, 5.0);
                }
                reviews.push(ReviewIn {
                    judge: judge_id(j),
                    project: project_id(p),
                    score: (total - CRITERIA as f64) / (4.0 * CRITERIA as f64),
                });
            }
        }
        Panel {
            input: CalibrationInput {
                projects: (0..np)
                    .map(|p| ProjectIn {
                        id: project_id(p),
                        excluded: None,
                    })
                    .collect(),
                judges: (0..nj).map(|j| JudgeIn { id: judge_id(j) }).collect(),
                reviews,
                comparisons: vec![],
            },
            true_quality,
            severity,
            scale,
            noise,
            kind,
        }
    }

    /// True quality by project id.
    pub fn truth_of(&self, id: &str) -> Option<f64> {
        let i = self.input.projects.iter().position(|p| p.id == id)?;
        self.true_quality.get(i).copied()
    }
}

/// Pairwise judges walking the expo floor (issue 26), added to a panel by
/// [`Panel::add_comparisons`].
///
/// Each judge makes between `min` and `max` comparisons (uniform): it starts at a
/// project and moves on, each time to the least visited project it has not seen yet
/// (random tie-break; judges take turns, so visits stay even as in Gavel's planner), and
/// says which of the current and the previous project was better. An honest judge perceives
/// each project as `q + σ_k ε` and picks the larger, `σ_k = noise_sd · exp(0.35 z)`; a
/// *random* judge tosses a coin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairParams {
    pub judges: usize,
    pub min: usize,
    pub max: usize,
    /// Perception noise of a typical judge, on the quality scale (true qualities have sd
    /// 0.15; 0.1 makes an honest judge agree with the truth on ~80 % of random pairs).
    pub noise_sd: f64,
    /// Judges who click at random.
    pub random: usize,
    pub seed: u64,
}

impl PairParams {
    /// Gavel-like judges: 15–25 comparisons each, perception noise 0.1.
    pub fn gavel(judges: usize, seed: u64) -> Self {
        PairParams {
            judges,
            min: 15,
            max: 25,
            noise_sd: 0.1,
            random: 0,
            seed,
        }
    }
}

/// Id of the `k`-th pairwise judge.
pub fn comparison_judge_id(k: usize) -> String {
    format!("c{k:04}")
}

impl Panel {
    /// A panel of `projects` projects judged only by comparisons.
    pub fn generate_pairwise(projects: usize, pp: PairParams) -> Panel {
        let mut panel = Panel::generate(SynthParams {
            judges: 0,
            k: 0,
            ..SynthParams::realistic(projects, 0, 0, pp.seed)
        });
        panel.add_comparisons(pp);
        panel
    }

    /// Adds `pp.judges` pairwise judges (ids [`comparison_judge_id`]) and their
    /// comparisons; their entries in `kind` and `noise` follow the score judges'.
    pub fn add_comparisons(&mut self, pp: PairParams) {
        let mut rng = Rng::stream(pp.seed, STREAM_SYNTH + 1);
        let np = self.true_quality.len();
        let nk = pp.judges;
        let noise: Vec<f64> = (0..nk)
            .map(|_| pp.noise_sd * (NOISE_SPREAD * rng.normal()).exp())
            .collect();
        let mut order: Vec<usize> = (0..nk).collect();
        rng.shuffle(&mut order);
        let mut kind = vec![JudgeKind::Normal; nk];
        for &k in order.iter().take(pp.random) {
            kind[k] = JudgeKind::Random;
        }
        let span = pp.max.saturating_sub(pp.min) + 1;
        let todo: Vec<usize> = (0..nk).map(|_| pp.min + rng.index(span)).collect();
        let mut done = vec![0usize; nk];
        let mut seen = vec![vec![false; np]; nk];
        let mut at: Vec<Option<usize>> = vec![None; nk];
        let mut visits = vec![0usize; np];
        let next = |seen: &[bool], visits: &[usize], rng: &mut Rng| {
            let tie: Vec<u64> = (0..np).map(|_| rng.next_u64()).collect();
            (0..np)
                .filter(|&p| !seen[p])
                .min_by_key(|&p| (visits[p], tie[p]))
        };
        loop {
            let mut moved = false;
            for k in 0..nk {
                if done[k] >= todo[k] {
                    continue;
                }
                let Some(p) = next(&seen[k], &visits, &mut rng) else {
                    continue;
                };
                moved = true;
                seen[k][p] = true;
                visits[p] += 1;
                if let Some(prev) = at[k] {
                    let a_better = match kind[k] {
                        JudgeKind::Random => rng.unit() < 0.5,
                        _ => {
                            let a = self.true_quality[p] + noise[k] * rng.normal();
                            let b = self.true_quality[prev] + noise[k] * rng.normal();
                            a > b
                        }
                    };
                    let (better, worse) = if a_better { (p, prev) } else { (prev, p) };
                    self.input.comparisons.push(ComparisonIn {
                        judge: comparison_judge_id(k),
                        better: project_id(better),
                        worse: project_id(worse),
                    });
                    done[k] += 1;
                }
                at[k] = Some(p);
            }
            if !moved {
                break;
            }
        }
        for k in 0..nk {
            self.input.judges.push(JudgeIn {
                id: comparison_judge_id(k),
            });
            self.severity.push(0.0);
            self.scale.push(1.0);
            self.noise.push(noise[k]);
            self.kind.push(kind[k]);
        }
    }
}

/// Kendall's τ-b between two equally long samples (ties in either count as
/// neither concordant nor discordant). Returns 0 when undefined.
pub fn kendall_tau(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (mut conc, mut disc, mut ties_a, mut ties_b) = (0i64, 0i64, 0i64, 0i64);
    for i in 0..n {
        for j in i + 1..n {
            let da = a[i] - a[j];
            let db = b[i] - b[j];
            if da == 0.0 && db == 0.0 {
                continue;
            } else if da == 0.0 {
                ties_a += 1;
            } else if db == 0.0 {
                ties_b += 1;
            } else if (da > 0.0) == (db > 0.0) {
                conc += 1;
            } else {
                disc += 1;
            }
        }
    }
    let n1 = (conc + disc + ties_a) as f64;
    let n2 = (conc + disc + ties_b) as f64;
    if n1 <= 0.0 || n2 <= 0.0 {
        return 0.0;
    }
    (conc - disc) as f64 / (n1 * n2).sqrt()
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchReport {
    /// Wall time of one `calibrate` call (CV + fit + bootstrap).
    pub seconds: f64,
    pub kendall_tau_raw: f64,
    pub kendall_tau_calibrated: f64,
    /// Fraction of ranked projects whose true rank lies in the 90% interval.
    pub coverage: f64,
}

/// Scores of a result against a panel's truth: (τ raw, τ calibrated,
/// interval coverage) over the ranked projects.
pub fn score_against_truth(
    panel: &Panel,
    result: &super::types::CalibrationResult,
) -> (f64, f64, f64) {
    let ranked: Vec<&super::types::ProjectOut> = result
        .projects
        .iter()
        .filter(|p| p.rank.is_some())
        .collect();
    let truth: Vec<f64> = ranked
        .iter()
        .map(|p| panel.truth_of(&p.id).unwrap_or(0.0))
        .collect();
    let raw: Vec<f64> = ranked.iter().map(|p| p.raw_mean.unwrap_or(0.0)).collect();
    let cal: Vec<f64> = ranked.iter().map(|p| p.quality.unwrap_or(0.0)).collect();
    let mut covered = 0usize;
    let mut with_interval = 0usize;
    for (i, p) in ranked.iter().enumerate() {
        if let (Some(lo), Some(hi)) = (p.rank_low, p.rank_high) {
            with_interval += 1;
            let true_rank = 1 + truth.iter().filter(|&&t| t > truth[i]).count() as u32;
            if lo <= true_rank && true_rank <= hi {
                covered += 1;
            }
        }
    }
    let coverage = if with_interval == 0 {
        0.0
    } else {
        covered as f64 / with_interval as f64
    };
    (
        kendall_tau(&raw, &truth),
        kendall_tau(&cal, &truth),
        coverage,
    )
}

/// Generate a realistic panel, calibrate it once with the default grid and
/// `bootstrap` replicates, and report time and quality.
pub fn bench(projects: usize, judges: usize, k: usize, bootstrap: u32, seed: u64) -> BenchReport {
    let panel = Panel::generate(SynthParams::realistic(projects, judges, k, seed));
    let params = Params {
        bootstrap,
        ..Params::default_for(seed)
    };
    let start = Instant::now();
    let result = super::calibrate(&panel.input, &params);
    let seconds = start.elapsed().as_secs_f64();
    let (kendall_tau_raw, kendall_tau_calibrated, coverage) = score_against_truth(&panel, &result);
    BenchReport {
        seconds,
        kendall_tau_raw,
        kendall_tau_calibrated,
        coverage,
    }
}
