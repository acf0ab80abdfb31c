//! What engine `verdict-calibrate/3` tells organizers beyond the ranking: how certain the
//! top places are (public), whether the fit settled, how much of the scores is signal, and
//! a few sentences on what to do about it (organizers only).

use super::fit::ModelFit;
use super::posterior::{Draws, Spread};
use super::types::{
    CERTAINTY_PLACES, CONVERGED_CHANGE, Certainty, Convergence, FLAG_CONSTANT, FLAG_DISCORDANT,
    JudgeOut, PairOdds, PlaceOdds, Signal,
};

/// Quality share below which judges "disagree more than usual".
pub(crate) const LOW_SIGNAL: f64 = 0.35;
/// Probability from which a place counts as clear.
pub(crate) const CLEAR_PLACE: f64 = 0.9;
/// Probability under which the order of two neighbouring places is not clear.
pub(crate) const UNCLEAR_ORDER: f64 = 0.75;
/// ... and under which it is close to a coin toss.
pub(crate) const COIN_TOSS: f64 = 0.6;
/// Engine v5: median reviews per judge below which the report says that the flags cannot
/// vouch for every judge. With fewer, a judge who scores at random was caught at most
/// 72 % of the time on every synthetic panel shape (`coverage::flags_by_panel_shape`:
/// 15 reviews, 0.72; 10, 0.39; 4–5 on sparse panels, 0.19), and no test could do much
/// better (`coverage::oracle_flag_power`).
pub(crate) const CHECKABLE_REVIEWS: usize = 15;
/// z for the two-sided 90 % bound of the quality share.
const Z90: f64 = 1.644_853_626_951_472_2;

/// The top [`CERTAINTY_PLACES`] projects in published order (by point rank, then id): their
/// chance of their place and of every pair among them. `ranks[l]` and `ids[l]` are the
/// point rank and id of the design's project `l`.
pub(crate) fn certainty(draws: &Draws, ranks: &[u32], ids: &[&str]) -> Certainty {
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by(|&a, &b| ranks[a].cmp(&ranks[b]).then_with(|| ids[a].cmp(ids[b])));
    order.truncate(CERTAINTY_PLACES);
    let places = order
        .iter()
        .map(|&l| PlaceOdds {
            project: ids[l].to_string(),
            rank: ranks[l],
            exact: draws.share(l, |r| r == ranks[l]),
            at_least: draws.share(l, |r| r <= ranks[l]),
        })
        .collect();
    let mut pairs = Vec::new();
    for (x, &a) in order.iter().enumerate() {
        for &b in &order[x + 1..] {
            pairs.push(PairOdds {
                better: ids[a].to_string(),
                worse: ids[b].to_string(),
                probability: draws.better(a, b),
            });
        }
    }
    Certainty {
        draws: u32::try_from(draws.n).unwrap_or(u32::MAX),
        places,
        pairs,
    }
}

pub(crate) fn convergence(fit: &ModelFit) -> Convergence {
    Convergence {
        passes: fit.passes,
        final_change: fit.weight_change,
        converged: fit.weight_change < CONVERGED_CHANGE,
    }
}

/// Variance shares of quality, severity and noise; the quality share's bounds come from
/// the sampling variance of the spread of `n` estimates, `2 var² / (n − 1)`.
pub(crate) fn signal(fit: &ModelFit, spread: Spread) -> Signal {
    let nq = fit.q.len();
    let severity = fit.b.iter().map(|b| b * b).sum::<f64>() / fit.b.len().max(1) as f64;
    let noise = fit.pooled.max(0.0);
    let share = |tau2: f64| {
        let total = tau2 + severity + noise;
        if total > 0.0 { tau2 / total } else { 0.0 }
    };
    let sd = if nq > 1 {
        (2.0 / (nq - 1) as f64).sqrt() * spread.estimates
    } else {
        0.0
    };
    let total = spread.tau2 + severity + noise;
    let part = |x: f64| if total > 0.0 { x / total } else { 0.0 };
    Signal {
        quality: share(spread.tau2),
        quality_low: share((spread.tau2 - Z90 * sd).max(0.0)),
        quality_high: share(spread.tau2 + Z90 * sd),
        severity: part(severity),
        noise: part(noise),
    }
}

fn percent(x: f64) -> String {
    format!("{:.0} %", 100.0 * x)
}

/// The line on the shares of the score variance.
fn shares_line(signal: &Signal) -> String {
    let shares = format!(
        "project quality explains {} of the score variance (90 %: {} to {}), judge severity {}, \
         review noise {}",
        percent(signal.quality),
        percent(signal.quality_low),
        percent(signal.quality_high),
        percent(signal.severity),
        percent(signal.noise)
    );
    if signal.quality < LOW_SIGNAL {
        format!(
            "Judges disagree more than usual: {shares}. Consider a second round of reviews \
             for the top {CERTAINTY_PLACES}."
        )
    } else {
        format!("{}{}.", shares[..1].to_uppercase(), &shares[1..])
    }
}

/// Plain-words advice from the run's figures (`signal`: the shares of the score variance,
/// when there are scores); `excluded_not_comparable` counts projects
/// outside the ranked component; `unchecked` (engine v5 on) adds the line on judges with
/// too few reviews to be checked.
pub(crate) fn summary(
    convergence: &Convergence,
    signal: Option<&Signal>,
    certainty: Option<&Certainty>,
    judges: &[JudgeOut],
    excluded_not_comparable: usize,
    unchecked: bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    if !convergence.converged {
        lines.push(format!(
            "The judges' noise weights had not settled after {} passes (the last changed a \
             weight by {}): treat the ranking as provisional.",
            convergence.passes,
            percent(convergence.final_change)
        ));
    }
    if let Some(signal) = signal {
        lines.push(shares_line(signal));
    }
    if let Some(c) = certainty {
        if let Some(first) = c.places.first() {
            if first.exact >= CLEAR_PLACE {
                lines.push(format!(
                    "First place is clear: {} is first in {} of the posterior draws.",
                    first.project,
                    percent(first.exact)
                ));
            } else {
                lines.push(format!(
                    "First place is not settled: {} is first in only {} of the posterior draws.",
                    first.project,
                    percent(first.exact)
                ));
            }
        }
        // Neighbouring places among the first four (prizes are usually three).
        for w in c.places.windows(2).take(3) {
            let p = c
                .pairs
                .iter()
                .find(|p| p.better == w[0].project && p.worse == w[1].project)
                .map_or(1.0, |p| p.probability);
            if p < UNCLEAR_ORDER {
                let toss = if p < COIN_TOSS {
                    ", close to a coin toss"
                } else {
                    ""
                };
                lines.push(format!(
                    "Ranks {} and {} are not clearly ordered ({} that {} is better than {}{toss}): \
                     consider a tie-break round.",
                    w[0].rank,
                    w[1].rank,
                    percent(p),
                    w[0].project,
                    w[1].project,
                ));
            }
        }
    }
    let flagged = judges
        .iter()
        .filter(|j| j.flag == FLAG_DISCORDANT || j.flag == FLAG_CONSTANT)
        .count();
    if flagged > 0 {
        lines.push(format!(
            "{flagged} judge(s) score unlike the others (flag discordant or constant): look at \
             their reviews before publishing."
        ));
    }
    if unchecked {
        let mut reviews: Vec<u32> = judges
            .iter()
            .filter(|j| j.reviews >= 2 && j.flag != FLAG_CONSTANT)
            .map(|j| j.reviews)
            .collect();
        reviews.sort_unstable();
        if let Some(&median) = reviews.get(reviews.len() / 2)
            && (median as usize) < CHECKABLE_REVIEWS
        {
            lines.push(format!(
                "Judges have {median} reviews each (median): too few for the flags to catch \
                 a judge who scores at random reliably (on panels like this, fewer than three \
                 in four are caught), so an ok flag does not vouch for a judge. Read the \
                 reviews of any judge you doubt, or give each judge at least \
                 {CHECKABLE_REVIEWS} projects."
            ));
        }
    }
    if excluded_not_comparable > 0 {
        lines.push(format!(
            "{excluded_not_comparable} project(s) cannot be compared with the rest (their \
             judges share no project with the main group): assign a judge from the main group \
             to them."
        ));
    }
    lines
}
