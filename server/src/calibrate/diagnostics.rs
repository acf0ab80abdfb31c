//! Judge flags and review-level diagnostics. Nothing here feeds back into
//! the fit: these are reports for organisers.

use std::collections::BTreeMap;

use super::fit::ModelFit;
use super::judge_flags;
use super::model::{Design, Engine};
use super::prep::Rev;
use super::types::{
    FLAG_CONSTANT, FLAG_DISCORDANT, FLAG_NO_REVIEWS, FLAG_NOT_COMPARABLE, FLAG_OK,
    FLAG_SINGLE_REVIEW, IdenticalJudges, JudgeOut, OutlierReview,
};

// A judge is "discordant" when it is
// - wild: robust z-score of its log-noise > 3 AND noise > 2x the median
//   judge's (the z-score alone flagged ~2-3% of honest judges on synthetic
//   panels, whose noise legitimately varies by a factor ~2; with the ratio
//   guard it is ~0.1%), or
// - reversed (>= 4 reviews with a leave-out consensus): the correlation with
//   the consensus of the other judges is significantly negative (one-sided
//   t < -1.645), or merely negative while its noise is > 1.5x the median.
// Measured on the benchmark panels (see mod.rs): 19/20 reversed judges
// flagged, 3 of 3160 honest judges.

/// Robust z-score of a judge's log-noise above which it may be "wild".
pub(crate) const DISCORDANT_NOISE_Z: f64 = 3.0;
/// ... provided its noise is also this many times the median judge's.
pub(crate) const DISCORDANT_NOISE_RATIO: f64 = 2.0;
/// One-sided t statistic of the correlation with the leave-judge-out
/// consensus below which a judge is "reversed" (≈ 5% level).
pub(crate) const DISCORDANT_CORR_T: f64 = -1.645;
/// Noise ratio above which any negative slope counts as "reversed".
pub(crate) const DISCORDANT_REVERSED_NOISE_RATIO: f64 = 1.5;
/// Minimum reviews with a leave-out consensus for the reversal tests.
pub(crate) const DISCORDANT_MIN_REVIEWS: usize = 4;
/// |standardised residual| above which a review is listed as an outlier.
pub(crate) const OUTLIER_Z: f64 = 3.5;
/// Minimum shared projects for an "identical judges" report.
pub(crate) const IDENTICAL_MIN_SHARED: u32 = 3;

/// The fitted main component, with index maps between the global (sorted
/// id) space and the design's local space.
pub(crate) struct MainFit<'a> {
    pub design: &'a Design,
    pub fit: &'a ModelFit,
    pub judge_local: &'a [Option<usize>],
    pub project_global: &'a [usize],
    pub judge_global: &'a [usize],
}

pub(crate) fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    })
}

/// Leave-this-review-out consensus of the review's project (its quality fitted without
/// review `i`) and that consensus's variance in units of the pooled noise, or `None` when
/// nobody else reviewed the project.
pub(crate) fn consensus(m: &MainFit, i: usize) -> Option<(f64, f64)> {
    let (d, f) = (m.design, m.fit);
    let p = d.p[i];
    let rest = f.normal.wp[p] - f.w[i];
    if rest <= 1e-9 * f.normal.wp[p] {
        return None;
    }
    let c = (f.q[p] * f.normal.wp[p] - f.w[i] * (d.y[i] - f.b[d.j[i]])) / rest;
    Some((c, 1.0 / rest))
}

/// Slope and correlation t statistic of a judge's scores against the
/// consensus computed without that judge's review, over its reviews whose
/// project has another reviewer.
fn consensus_agreement(m: &MainFit, reviews: &[usize]) -> (Option<f64>, Option<f64>, usize) {
    let d = m.design;
    let pairs: Vec<(f64, f64)> = reviews
        .iter()
        .filter_map(|&i| consensus(m, i).map(|(c, _)| (c, d.y[i])))
        .collect();
    let n = pairs.len();
    if n < 3 {
        return (None, None, n);
    }
    let nf = n as f64;
    let mx = pairs.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = pairs.iter().map(|p| p.1).sum::<f64>() / nf;
    let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
    for &(x, y) in &pairs {
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
        sxy += (x - mx) * (y - my);
    }
    if sxx <= 1e-18 {
        return (None, None, n);
    }
    let slope = sxy / sxx;
    if syy <= 1e-18 {
        return (Some(slope), None, n);
    }
    let r = (sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0);
    let t = if r * r >= 1.0 {
        r.signum() * f64::INFINITY
    } else {
        r * ((nf - 2.0) / (1.0 - r * r)).sqrt()
    };
    (Some(slope), Some(t), n)
}

/// Every judge's estimates and flag. Engines v1 and v2 flag by the rules above, v3 by the
/// tests of `judge_flags.rs`.
pub(crate) fn judges_out(
    judge_ids: &[String],
    cand: &[Rev],
    judge_in_main: &[bool],
    main: Option<&MainFit>,
    engine: Engine,
) -> Vec<JudgeOut> {
    judges_out_with_p(judge_ids, cand, judge_in_main, main, engine).0
}

/// [`judges_out`], and each judge's p-value of the score tests (`judge_flags.rs`) before
/// the false-discovery control (`None` when untested; engines v3 and later only).
pub(crate) fn judges_out_with_p(
    judge_ids: &[String],
    cand: &[Rev],
    judge_in_main: &[bool],
    main: Option<&MainFit>,
    engine: Engine,
) -> (Vec<JudgeOut>, Vec<Option<f64>>) {
    let nj = judge_ids.len();
    let mut score_p: Vec<Option<f64>> = vec![None; nj];
    let mut scores: Vec<Vec<f64>> = vec![Vec::new(); nj];
    for r in cand {
        scores[r.j].push(r.y);
    }
    let is_constant =
        |j: usize| scores[j].len() >= 2 && scores[j].iter().all(|&y| y == scores[j][0]);

    // Robust centre and spread of the log-noise of ordinary judges.
    let mut noise_z: Vec<Option<f64>> = vec![None; nj];
    let mut noise_ratio: Vec<f64> = vec![1.0; nj];
    let mut agreement: Vec<(Option<f64>, Option<f64>, usize)> = vec![(None, None, 0); nj];
    // Engine v3's verdicts.
    let mut constant = vec![false; nj];
    let mut tested_discordant = vec![false; nj];
    if let Some(m) = main {
        let eligible: Vec<usize> = (0..nj)
            .filter(|&j| judge_in_main[j] && scores[j].len() >= 2 && !is_constant(j))
            .collect();
        let logs: Vec<(usize, f64)> = eligible
            .iter()
            .filter_map(|&j| {
                let lj = m.judge_local[j]?;
                let s2 = m.fit.sig2[lj];
                (s2 > 0.0).then(|| (j, 0.5 * s2.ln()))
            })
            .collect();
        let mut vals: Vec<f64> = logs.iter().map(|x| x.1).collect();
        if let Some(med) = median(&mut vals) {
            let mut dev: Vec<f64> = vals.iter().map(|v| (v - med).abs()).collect();
            let mad = median(&mut dev).unwrap_or(0.0);
            // Floor: a 10% spread in noise is the least we call "normal
            // variation", so near-identical judges do not make everyone an
            // outlier.
            let spread = (1.4826 * mad).max(0.1);
            for (j, l) in logs {
                noise_z[j] = Some((l - med) / spread);
                noise_ratio[j] = (l - med).exp();
            }
        }
        let mut by_judge: Vec<Vec<usize>> = vec![Vec::new(); m.design.nj];
        for (i, &lj) in m.design.j.iter().enumerate() {
            by_judge[lj].push(i);
        }
        for (j, slot) in agreement.iter_mut().enumerate() {
            if let Some(lj) = m.judge_local[j] {
                *slot = consensus_agreement(m, &by_judge[lj]);
            }
        }
        if engine.posterior() {
            let step = judge_flags::score_step(cand.iter().map(|r| r.y));
            let mut tested = vec![false; m.design.nj];
            for j in 0..nj {
                if let Some(lj) = m.judge_local[j] {
                    let equal = is_constant(j);
                    constant[j] = equal && judge_flags::improbably_constant(m, &by_judge[lj], step);
                    tested[lj] = scores[j].len() >= 2 && !constant[j];
                }
            }
            let flagged = judge_flags::discordant(m, &by_judge, &tested);
            for (slot, local) in tested_discordant.iter_mut().zip(m.judge_local) {
                *slot = local.is_some_and(|lj| flagged[lj]);
            }
            let p = judge_flags::discordant_p_values(m, &by_judge, &tested);
            for (slot, local) in score_p.iter_mut().zip(m.judge_local) {
                *slot = local.and_then(|lj| p[lj]);
            }
        }
    }

    let judges = (0..nj)
        .map(|j| {
            let n = scores[j].len();
            let local = main.and_then(|m| m.judge_local[j].map(|lj| (m, lj)));
            let flag = if n == 0 {
                FLAG_NO_REVIEWS
            } else if !judge_in_main[j] || local.is_none() {
                FLAG_NOT_COMPARABLE
            } else if engine.posterior() {
                if constant[j] {
                    FLAG_CONSTANT
                } else if n == 1 {
                    FLAG_SINGLE_REVIEW
                } else if tested_discordant[j] {
                    FLAG_DISCORDANT
                } else {
                    FLAG_OK
                }
            } else if is_constant(j) {
                FLAG_CONSTANT
            } else if n == 1 {
                FLAG_SINGLE_REVIEW
            } else {
                let wild = noise_z[j].is_some_and(|z| z > DISCORDANT_NOISE_Z)
                    && noise_ratio[j] > DISCORDANT_NOISE_RATIO;
                let (slope, t, k) = agreement[j];
                let reversed = k >= DISCORDANT_MIN_REVIEWS
                    && (t.is_some_and(|t| t < DISCORDANT_CORR_T)
                        || (slope.is_some_and(|s| s < 0.0)
                            && noise_ratio[j] > DISCORDANT_REVERSED_NOISE_RATIO));
                if wild || reversed {
                    FLAG_DISCORDANT
                } else {
                    FLAG_OK
                }
            };
            JudgeOut {
                id: judge_ids[j].clone(),
                reviews: u32::try_from(n).unwrap_or(u32::MAX),
                offset: local.map(|(m, lj)| m.fit.b[lj]),
                scale: agreement[j].0,
                noise: local.map(|(m, lj)| m.fit.sig2[lj].max(0.0).sqrt()),
                flag: flag.to_string(),
                comparisons: None,
                reliability: None,
            }
        })
        .collect();
    (judges, score_p)
}

/// Reviews whose residual is more than [`OUTLIER_Z`] robust standard
/// deviations away, standardised by a pooled (not per-judge) scale so that a
/// wild judge's reviews are still reported. Sorted by (judge, project).
pub(crate) fn outliers(
    m: &MainFit,
    judge_ids: &[String],
    project_ids: &[String],
) -> Vec<OutlierReview> {
    let (d, f) = (m.design, m.fit);
    let std: Vec<(usize, f64)> = (0..d.len())
        .filter(|&i| 1.0 - f.lev[i] > 1e-6)
        .map(|i| (i, f.resid[i] / (1.0 - f.lev[i]).sqrt()))
        .collect();
    let mut abs: Vec<f64> = std.iter().map(|x| x.1.abs()).collect();
    let mut scale = 1.4826 * median(&mut abs).unwrap_or(0.0);
    if scale <= 1e-9 {
        scale = f.pooled.max(0.0).sqrt();
    }
    if scale <= 1e-9 {
        return Vec::new();
    }
    let mut out: Vec<OutlierReview> = std
        .into_iter()
        .filter(|&(_, z)| (z / scale).abs() > OUTLIER_Z)
        .map(|(i, _)| OutlierReview {
            judge: judge_ids[m.judge_global[d.j[i]]].clone(),
            project: project_ids[m.project_global[d.p[i]]].clone(),
            residual: f.resid[i],
        })
        .collect();
    out.sort_by(|a, b| (&a.judge, &a.project).cmp(&(&b.judge, &b.project)));
    out
}

/// Judge pairs that gave identical scores on every one of at least
/// [`IDENTICAL_MIN_SHARED`] shared projects (copy-paste or shared accounts).
/// `cand` must be sorted by project.
pub(crate) fn identical_judges(cand: &[Rev], judge_ids: &[String]) -> Vec<IdenticalJudges> {
    let mut pairs: BTreeMap<(usize, usize), (u32, bool)> = BTreeMap::new();
    let mut s = 0;
    while s < cand.len() {
        let mut e = s;
        while e < cand.len() && cand[e].p == cand[s].p {
            e += 1;
        }
        for a in s..e {
            for b in a + 1..e {
                let (ra, rb) = (cand[a], cand[b]);
                if ra.j == rb.j {
                    continue;
                }
                let key = (ra.j.min(rb.j), ra.j.max(rb.j));
                let entry = pairs.entry(key).or_insert((0, true));
                entry.0 += 1;
                entry.1 &= ra.y == rb.y;
            }
        }
        s = e;
    }
    pairs
        .into_iter()
        .filter(|&(_, (shared, equal))| equal && shared >= IDENTICAL_MIN_SHARED)
        .map(|((a, b), (shared, _))| IdenticalJudges {
            judge_a: judge_ids[a].clone(),
            judge_b: judge_ids[b].clone(),
            shared,
        })
        .collect()
}
