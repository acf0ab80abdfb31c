//! Model-variant benchmark (test-only). Run with
//! `cargo test --release --lib variants -- --ignored --nocapture`.
//! The numbers it prints are recorded in the doc comment of `mod.rs`.

use super::fit::ModelOptions;
use super::model::{self, Design, Engine};
use super::synth::{JudgeKind, Panel, SynthParams, kendall_tau, score_against_truth};
use super::{CalibrationResult, FLAG_DISCORDANT, Params, Progress, calibrate_with};

struct Scenario {
    name: &'static str,
    make: fn(u64) -> SynthParams,
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "60p/24j/k4 realistic",
            make: |s| SynthParams::realistic(60, 24, 4, s),
        },
        Scenario {
            name: "200p/40j/k5 realistic",
            make: |s| SynthParams::realistic(200, 40, 5, s),
        },
        Scenario {
            name: "60p/24j/k4 +1 discordant +1 constant",
            make: |s| SynthParams {
                discordant: 1,
                constant: 1,
                ..SynthParams::realistic(60, 24, 4, s)
            },
        },
        Scenario {
            name: "200p/40j/k5 scale_sd 0.35",
            make: |s| SynthParams {
                scale_sd: 0.35,
                ..SynthParams::realistic(200, 40, 5, s)
            },
        },
        Scenario {
            name: "100p/30j/k3 severity 0.15 noise 0.18",
            make: |s| SynthParams {
                severity_sd: 0.15,
                noise_sd: 0.18,
                ..SynthParams::realistic(100, 30, 3, s)
            },
        },
    ]
}

/// Additive fit followed by alternating least squares for
/// `y = m + a_j + s_j (q_p - m)` with ridge priors a_j ~ 0, s_j ~ 1.
/// Returns the project qualities in the design's local order.
fn scale_model(d: &Design, lambda: f64, iters: usize) -> Vec<f64> {
    let w = vec![1.0; d.len()];
    let base = model::solve(d, &w, lambda, Engine::V2);
    let mut q = base.q.clone();
    let mut a = base.b.clone();
    let mut s = vec![1.0; d.nj];
    let resid: f64 = (0..d.len())
        .map(|i| (d.y[i] - q[d.p[i]] - a[d.j[i]]).powi(2))
        .sum::<f64>()
        / d.len().max(1) as f64;
    // Prior sd 0.25 on the log-ish scale factor.
    let lambda_s = resid / 0.25f64.powi(2);
    for _ in 0..iters {
        let m = q.iter().sum::<f64>() / q.len().max(1) as f64;
        // Judge step: 2x2 ridge regression per judge.
        let mut acc = vec![[0.0f64; 5]; d.nj]; // n, Σx, Σxx, Σy', Σxy'
        for i in 0..d.len() {
            let x = q[d.p[i]] - m;
            let y = d.y[i] - m;
            let t = &mut acc[d.j[i]];
            t[0] += 1.0;
            t[1] += x;
            t[2] += x * x;
            t[3] += y;
            t[4] += x * y;
        }
        for j in 0..d.nj {
            let t = acc[j];
            // minimise Σ (y - a - s x)² + λ a² + λs (s - 1)²
            let (a11, a12, a22) = (t[0] + lambda, t[1], t[2] + lambda_s);
            let (r1, r2) = (t[3], t[4] + lambda_s);
            let det = a11 * a22 - a12 * a12;
            if det.abs() > 1e-12 {
                a[j] = (r1 * a22 - a12 * r2) / det;
                s[j] = ((a11 * r2 - a12 * r1) / det).max(0.2);
            }
        }
        // Project step.
        for (p, qp) in q.iter_mut().enumerate() {
            let (mut num, mut den) = (0.0, 0.0);
            for i in d.start[p]..d.start[p + 1] {
                let sj = s[d.j[i]];
                num += sj * (d.y[i] - m - a[d.j[i]]);
                den += sj * sj;
            }
            if den > 0.0 {
                *qp = m + num / den;
            }
        }
    }
    q
}

/// Ratio of the actual estimation error to the reported standard error:
/// `q̂` is regressed on the truth (the truth lives on its own scale), and
/// the residual sd is compared with the root-mean-square `std_error`.
/// About 1 when the standard errors are honest.
fn se_calibration(panel: &Panel, res: &CalibrationResult) -> f64 {
    let ranked: Vec<_> = res
        .projects
        .iter()
        .filter(|p| p.quality.is_some())
        .collect();
    let x: Vec<f64> = ranked
        .iter()
        .map(|p| panel.truth_of(&p.id).unwrap())
        .collect();
    let y: Vec<f64> = ranked.iter().map(|p| p.quality.unwrap()).collect();
    let n = x.len() as f64;
    let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
    let sxy: f64 = x.iter().zip(&y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx).powi(2)).sum();
    let slope = sxy / sxx;
    let rss: f64 = x
        .iter()
        .zip(&y)
        .map(|(a, b)| (b - my - slope * (a - mx)).powi(2))
        .sum();
    let se2: f64 = ranked
        .iter()
        .map(|p| p.std_error.unwrap().powi(2))
        .sum::<f64>()
        / n;
    (rss / (n - 2.0)).sqrt() / se2.sqrt()
}

fn run(opts: &ModelOptions, panel: &Panel, bootstrap: u32, seed: u64) -> CalibrationResult {
    let params = Params {
        bootstrap,
        ..Params::default_for(seed)
    };
    calibrate_with(&panel.input, &params, opts, Engine::V2, Progress::none())
}

#[test]
#[ignore]
fn variants() {
    let seeds: Vec<u64> = (1..=20).collect();
    let variants: Vec<(&str, ModelOptions)> = vec![
        ("plain", ModelOptions::PLAIN),
        ("noise df8", ModelOptions::NOISE),
        (
            "noise df4",
            ModelOptions {
                prior_df: 4.0,
                ..ModelOptions::NOISE
            },
        ),
        (
            "noise df16",
            ModelOptions {
                prior_df: 16.0,
                ..ModelOptions::NOISE
            },
        ),
        (
            "huber",
            ModelOptions {
                huber: Some(1.345),
                irls_iters: 3,
                ..ModelOptions::PLAIN
            },
        ),
        (
            "noise+huber",
            ModelOptions {
                huber: Some(1.345),
                ..ModelOptions::NOISE
            },
        ),
    ];
    for sc in scenarios() {
        println!("== {}", sc.name);
        let panels: Vec<Panel> = seeds
            .iter()
            .map(|&s| Panel::generate((sc.make)(s)))
            .collect();
        let mut raw = 0.0;
        let mut scale_tau = 0.0;
        for (name, opts) in &variants {
            let (mut tau, mut cov, mut wins) = (0.0, 0.0, 0);
            let mut false_flags = 0;
            let mut hit_flags = 0;
            let mut bad_judges = 0;
            let (mut se_ratio, mut outliers) = (0.0, 0usize);
            raw = 0.0;
            scale_tau = 0.0;
            for (panel, &seed) in panels.iter().zip(&seeds) {
                let res = run(opts, panel, 200, seed);
                let (tr, tc, c) = score_against_truth(panel, &res);
                raw += tr;
                tau += tc;
                cov += c;
                wins += usize::from(tc > tr);
                se_ratio += se_calibration(panel, &res);
                outliers += res.diagnostics.outlier_reviews.len();
                for (j, kind) in panel.kind.iter().enumerate() {
                    let flag = &res.judges[j].flag;
                    match kind {
                        JudgeKind::Normal => false_flags += usize::from(flag == FLAG_DISCORDANT),
                        JudgeKind::Discordant => {
                            bad_judges += 1;
                            hit_flags += usize::from(flag == FLAG_DISCORDANT);
                        }
                        JudgeKind::Constant | JudgeKind::Random => {}
                    }
                }
                if *name == "plain" {
                    // Scale model evaluated on the same design.
                    let mut revs: Vec<(usize, usize, f64)> = Vec::new();
                    let pid = |id: &str| id[1..].parse::<usize>().unwrap();
                    let jid = |id: &str| id[1..].parse::<usize>().unwrap();
                    for r in &panel.input.reviews {
                        revs.push((pid(&r.project), jid(&r.judge), r.score));
                    }
                    revs.sort_by_key(|r| (r.0, r.1));
                    let d = Design::new(panel.true_quality.len(), panel.kind.len(), &revs);
                    let q = scale_model(&d, res.lambda.unwrap(), 30);
                    scale_tau += kendall_tau(&q, &panel.true_quality);
                }
            }
            let n = seeds.len() as f64;
            println!(
                "  {name:<12} tau={:.4} (raw {:.4}) wins {wins}/{} coverage={:.3} \
                 discordant flagged {hit_flags}/{bad_judges}, honest flagged {false_flags} \
                 err/se {:.2} outliers/panel {:.1}",
                tau / n,
                raw / n,
                seeds.len(),
                cov / n,
                se_ratio / n,
                outliers as f64 / n,
            );
            if *name == "plain" {
                println!("  {:<12} tau={:.4}", "scale-ALS", scale_tau / n);
            }
        }
        let _ = (raw, scale_tau);
    }
}
