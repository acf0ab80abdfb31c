//! Canonical JSON and hashes.
//!
//! The canonical form is written by hand rather than through `serde_json`
//! so that it cannot drift with serializer settings (e.g. a workspace
//! dependency enabling `preserve_order`) and so that floats are rendered
//! with a fixed number of significant digits: the hash must not depend on
//! the last bits of a floating-point computation.
//!
//! Rules: objects have keys sorted by byte order, no whitespace anywhere,
//! strings are escaped as by `serde_json`, `None` is `null`, floats go
//! through [`fmt_float`].

use sha2::{Digest, Sha256};

use super::types::{CalibrationInput, CalibrationResult, Certainty, Params};

/// Significant digits kept when rendering floats.
pub const FLOAT_SIGNIFICANT_DIGITS: usize = 9;

/// Canonical rendering of a float: rounded to 9 significant digits, shortest
/// decimal that round-trips the rounded value, no exponent. Magnitudes below
/// 1e-12 (including -0) render as `0`; non-finite values as `null`.
pub fn fmt_float(x: f64) -> String {
    if !x.is_finite() {
        return "null".to_string();
    }
    if x.abs() < 1e-12 {
        return "0".to_string();
    }
    // `{:.8e}` is correctly rounded (9 significant digits) on every
    // platform; parsing it back gives the nearest double to that decimal,
    // whose shortest round-trip `Display` form is the canonical text.
    let rounded: f64 = format!("{:.*e}", FLOAT_SIGNIFICANT_DIGITS - 1, x)
        .parse()
        .unwrap_or(x);
    format!("{rounded}")
}

/// Minimal JSON value tree for canonical output.
enum Canon {
    Null,
    Bool(bool),
    Int(u64),
    Float(f64),
    Str(String),
    Arr(Vec<Canon>),
    Obj(Vec<(&'static str, Canon)>),
}

impl Canon {
    fn write(&self, out: &mut String) {
        match self {
            Canon::Null => out.push_str("null"),
            Canon::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Canon::Int(i) => out.push_str(&i.to_string()),
            Canon::Float(f) => out.push_str(&fmt_float(*f)),
            Canon::Str(s) => write_str(s, out),
            Canon::Arr(items) => {
                out.push('[');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Canon::Obj(fields) => {
                let mut sorted: Vec<&(&str, Canon)> = fields.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                out.push('{');
                for (k, (key, value)) in sorted.into_iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    write_str(key, out);
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_str(s: &str, out: &mut String) {
    // serde_json's string escaping is stable and standard; serialising a
    // `&str` cannot fail.
    match serde_json::to_string(s) {
        Ok(escaped) => out.push_str(&escaped),
        Err(_) => out.push_str("\"\""),
    }
}

fn opt_f(x: Option<f64>) -> Canon {
    x.map_or(Canon::Null, Canon::Float)
}

fn opt_u(x: Option<u32>) -> Canon {
    x.map_or(Canon::Null, |v| Canon::Int(u64::from(v)))
}

fn opt_s(x: &Option<String>) -> Canon {
    x.as_ref().map_or(Canon::Null, |s| Canon::Str(s.clone()))
}

fn params_canon(p: &Params) -> Canon {
    Canon::Obj(vec![
        ("bootstrap", Canon::Int(u64::from(p.bootstrap))),
        ("folds", Canon::Int(u64::from(p.folds))),
        (
            "lambda_grid",
            Canon::Arr(p.lambda_grid.iter().map(|&l| Canon::Float(l)).collect()),
        ),
        // Seeds are full u64: a JSON string avoids precision loss in
        // JavaScript consumers.
        ("seed", Canon::Str(p.seed.to_string())),
    ])
}

fn render(c: &Canon) -> String {
    let mut out = String::new();
    c.write(&mut out);
    out
}

fn sha256_hex(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// Canonical JSON of a result. Arrays keep the result's (deterministic)
/// order.
pub fn canonical_json(r: &CalibrationResult) -> String {
    let projects = r
        .projects
        .iter()
        .map(|p| {
            let mut fields = vec![
                ("id", Canon::Str(p.id.clone())),
                ("reviews", Canon::Int(u64::from(p.reviews))),
                ("raw_mean", opt_f(p.raw_mean)),
                ("raw_rank", opt_u(p.raw_rank)),
                ("quality", opt_f(p.quality)),
                ("std_error", opt_f(p.std_error)),
                ("rank", opt_u(p.rank)),
                ("rank_low", opt_u(p.rank_low)),
                ("rank_high", opt_u(p.rank_high)),
                ("excluded", opt_s(&p.excluded)),
            ];
            // Engine v6's addition; absent (not null) in older results.
            if let Some(c) = p.comparisons {
                fields.push(("comparisons", Canon::Int(u64::from(c))));
            }
            Canon::Obj(fields)
        })
        .collect();
    let judges = r
        .judges
        .iter()
        .map(|j| {
            let mut fields = vec![
                ("id", Canon::Str(j.id.clone())),
                ("reviews", Canon::Int(u64::from(j.reviews))),
                ("offset", opt_f(j.offset)),
                ("scale", opt_f(j.scale)),
                ("noise", opt_f(j.noise)),
                ("flag", Canon::Str(j.flag.clone())),
            ];
            if let Some(c) = j.comparisons {
                fields.push(("comparisons", Canon::Int(u64::from(c))));
            }
            if let Some(r) = j.reliability {
                fields.push(("reliability", Canon::Float(r)));
            }
            Canon::Obj(fields)
        })
        .collect();
    let d = &r.diagnostics;
    let mut diagnostics = vec![
        (
            "outlier_reviews",
            Canon::Arr(
                d.outlier_reviews
                    .iter()
                    .map(|o| {
                        Canon::Obj(vec![
                            ("judge", Canon::Str(o.judge.clone())),
                            ("project", Canon::Str(o.project.clone())),
                            ("residual", Canon::Float(o.residual)),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "identical_judges",
            Canon::Arr(
                d.identical_judges
                    .iter()
                    .map(|p| {
                        Canon::Obj(vec![
                            ("judge_a", Canon::Str(p.judge_a.clone())),
                            ("judge_b", Canon::Str(p.judge_b.clone())),
                            ("shared", Canon::Int(u64::from(p.shared))),
                        ])
                    })
                    .collect(),
            ),
        ),
        ("ignored_reviews", Canon::Int(u64::from(d.ignored_reviews))),
    ];
    if let Some(n) = d.ignored_comparisons {
        diagnostics.push(("ignored_comparisons", Canon::Int(u64::from(n))));
    }
    // Engine v3's additions; absent (not null) in older results, which keep their bytes.
    if let Some(c) = &d.convergence {
        diagnostics.push((
            "convergence",
            Canon::Obj(vec![
                ("passes", Canon::Int(u64::from(c.passes))),
                ("final_change", Canon::Float(c.final_change)),
                ("converged", Canon::Bool(c.converged)),
            ]),
        ));
    }
    if let Some(s) = &d.signal {
        diagnostics.push((
            "signal",
            Canon::Obj(vec![
                ("quality", Canon::Float(s.quality)),
                ("quality_low", Canon::Float(s.quality_low)),
                ("quality_high", Canon::Float(s.quality_high)),
                ("severity", Canon::Float(s.severity)),
                ("noise", Canon::Float(s.noise)),
            ]),
        ));
    }
    if let Some(lines) = &d.summary {
        diagnostics.push((
            "summary",
            Canon::Arr(lines.iter().map(|l| Canon::Str(l.clone())).collect()),
        ));
    }
    let mut top = vec![
        ("engine_version", Canon::Str(r.engine_version.clone())),
        ("input_hash", Canon::Str(r.input_hash.clone())),
        ("params", params_canon(&r.params)),
        ("model", Canon::Str(r.model.clone())),
        ("lambda", opt_f(r.lambda)),
        ("cv_error", opt_f(r.cv_error)),
        ("components", Canon::Int(u64::from(r.components))),
        ("connected", Canon::Bool(r.connected)),
        ("projects", Canon::Arr(projects)),
        ("judges", Canon::Arr(judges)),
        ("diagnostics", Canon::Obj(diagnostics)),
    ];
    if let Some(c) = &r.certainty {
        top.push(("certainty", certainty_canon(c)));
    }
    render(&Canon::Obj(top))
}

fn certainty_canon(c: &Certainty) -> Canon {
    let places = c
        .places
        .iter()
        .map(|p| {
            Canon::Obj(vec![
                ("project", Canon::Str(p.project.clone())),
                ("rank", Canon::Int(u64::from(p.rank))),
                ("exact", Canon::Float(p.exact)),
                ("at_least", Canon::Float(p.at_least)),
            ])
        })
        .collect();
    let pairs = c
        .pairs
        .iter()
        .map(|p| {
            Canon::Obj(vec![
                ("better", Canon::Str(p.better.clone())),
                ("worse", Canon::Str(p.worse.clone())),
                ("probability", Canon::Float(p.probability)),
            ])
        })
        .collect();
    Canon::Obj(vec![
        ("draws", Canon::Int(u64::from(c.draws))),
        ("places", Canon::Arr(places)),
        ("pairs", Canon::Arr(pairs)),
    ])
}

/// SHA-256 (lowercase hex) of [`canonical_json`].
pub fn result_hash(r: &CalibrationResult) -> String {
    sha256_hex(&canonical_json(r))
}

/// Relative tolerance of [`compare_results`] on floats.
pub const FLOAT_REL_TOLERANCE: f64 = 1e-6;
/// Absolute tolerance of [`compare_results`] on floats (for values near 0).
pub const FLOAT_ABS_TOLERANCE: f64 = 1e-9;

/// How a re-computed result compares with a published one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reproduction {
    /// The canonical JSON is byte for byte the same.
    Exact,
    /// Same shape, and equal strings, integers, booleans and nulls; every
    /// float equal within [`FLOAT_REL_TOLERANCE`] relative or
    /// [`FLOAT_ABS_TOLERANCE`] absolute.
    WithinTolerance,
    Differs,
}

/// Compares a published canonical result (`published`, its text) with a
/// re-computation.
///
/// Why a tolerance at all: from `verdict-calibrate/2` on, the factorisation
/// is blocked and SIMD-dispatched, so another CPU may round differently in
/// the last bits, and a float whose 12th digit moves can change its 9th
/// rendered digit. Ranks, flags and every other integer or string must still
/// match exactly. `verdict-calibrate/1` (nalgebra's unblocked, scalar
/// Cholesky) has no such excuse and must reproduce byte for byte.
pub fn compare_results(published: &str, recomputed: &CalibrationResult) -> Reproduction {
    let ours = canonical_json(recomputed);
    if ours == published {
        return Reproduction::Exact;
    }
    if recomputed.engine_version == super::ENGINE_VERSION_1 {
        return Reproduction::Differs;
    }
    // Both sides go through the typed result, so that every float field is a
    // JSON float on both sides (canonical text writes 3.0 as `3`), and the
    // published text must be canonical itself: the tolerance forgives
    // rounding, not re-formatting.
    let parse = |text: &str| {
        serde_json::from_str::<CalibrationResult>(text)
            .ok()
            .filter(|r| canonical_json(r) == text)
            .and_then(|r| serde_json::to_value(r).ok())
    };
    match (parse(published), parse(&ours)) {
        (Some(a), Some(b)) if values_close(&a, &b) => Reproduction::WithinTolerance,
        _ => Reproduction::Differs,
    }
}

fn values_close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            let diff = (x - y).abs();
            diff <= FLOAT_ABS_TOLERANCE || diff <= FLOAT_REL_TOLERANCE * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(u, v)| values_close(u, v))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, u)| y.get(k).is_some_and(|v| values_close(u, v)))
        }
        _ => a == b,
    }
}

/// Canonical JSON of an input: projects and judges sorted by id, reviews
/// sorted by (judge, project, score); so any permutation of the input gives
/// the same text. Exact duplicates are kept (they affect the fit).
pub fn canonical_inputs_json(input: &CalibrationInput) -> String {
    let mut projects: Vec<(&str, Option<&str>)> = input
        .projects
        .iter()
        .map(|p| (p.id.as_str(), p.excluded.as_deref()))
        .collect();
    projects.sort();
    let mut judges: Vec<&str> = input.judges.iter().map(|j| j.id.as_str()).collect();
    judges.sort();
    let mut reviews: Vec<(&str, &str, f64)> = input
        .reviews
        .iter()
        .map(|r| (r.judge.as_str(), r.project.as_str(), r.score))
        .collect();
    reviews.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(a.2.total_cmp(&b.2)));
    let mut comparisons: Vec<(&str, &str, &str)> = input
        .comparisons
        .iter()
        .map(|c| (c.judge.as_str(), c.better.as_str(), c.worse.as_str()))
        .collect();
    comparisons.sort();
    let mut fields = vec![
        (
            "projects",
            Canon::Arr(
                projects
                    .into_iter()
                    .map(|(id, ex)| {
                        Canon::Obj(vec![
                            ("id", Canon::Str(id.to_string())),
                            (
                                "excluded",
                                ex.map_or(Canon::Null, |s| Canon::Str(s.to_string())),
                            ),
                        ])
                    })
                    .collect(),
            ),
        ),
        (
            "judges",
            Canon::Arr(
                judges
                    .into_iter()
                    .map(|id| Canon::Obj(vec![("id", Canon::Str(id.to_string()))]))
                    .collect(),
            ),
        ),
        (
            "reviews",
            Canon::Arr(
                reviews
                    .into_iter()
                    .map(|(j, p, s)| {
                        Canon::Obj(vec![
                            ("judge", Canon::Str(j.to_string())),
                            ("project", Canon::Str(p.to_string())),
                            ("score", Canon::Float(s)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ];
    // Only inputs with comparisons carry the key, so older inputs hash as before.
    if !comparisons.is_empty() {
        fields.push((
            "comparisons",
            Canon::Arr(
                comparisons
                    .into_iter()
                    .map(|(j, b, w)| {
                        Canon::Obj(vec![
                            ("judge", Canon::Str(j.to_string())),
                            ("better", Canon::Str(b.to_string())),
                            ("worse", Canon::Str(w.to_string())),
                        ])
                    })
                    .collect(),
            ),
        ));
    }
    render(&Canon::Obj(fields))
}

/// SHA-256 (lowercase hex) of [`canonical_inputs_json`].
pub fn inputs_hash(input: &CalibrationInput) -> String {
    sha256_hex(&canonical_inputs_json(input))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_canonical() {
        assert_eq!(fmt_float(0.5), "0.5");
        assert_eq!(fmt_float(3.0), "3");
        assert_eq!(fmt_float(-0.0), "0");
        assert_eq!(fmt_float(1e-15), "0");
        assert_eq!(fmt_float(f64::NAN), "null");
        assert_eq!(fmt_float(0.1 + 0.2), "0.3");
        assert_eq!(fmt_float(1.0 / 3.0), "0.333333333");
        assert_eq!(fmt_float(-2.0 / 3.0), "-0.666666667");
        assert_eq!(fmt_float(123456.7891234), "123456.789");
        // Last-bit noise does not change the text.
        let x = 0.123_456_789_f64;
        assert_eq!(fmt_float(x), fmt_float(f64::from_bits(x.to_bits() + 3)));
    }

    #[test]
    fn keys_are_sorted_and_strings_escaped() {
        let c = Canon::Obj(vec![
            ("b", Canon::Int(1)),
            ("a", Canon::Str("x\"y\n".into())),
        ]);
        assert_eq!(render(&c), r#"{"a":"x\"y\n","b":1}"#);
    }
}
