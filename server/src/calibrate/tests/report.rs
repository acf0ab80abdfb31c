//! The report: the podium's certainty, `constant` judges, and panels too thin to check.

use super::*;

/// Engine v3 states the podium's certainty: a project every judge scores far above the
/// rest is first in (nearly) every posterior draw, two projects every judge scores alike
/// are a coin toss, and the summary says so in words.
#[test]
fn the_podium_states_how_certain_each_place_is() {
    let mut ids: Vec<String> = (0..13).map(|i| format!("p{i:02}")).collect();
    ids.extend(["star", "twin-a", "twin-b"].map(String::from));
    let judges: Vec<String> = (0..8).map(|j| format!("j{j}")).collect();
    let mut reviews = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let base = match id.as_str() {
            "star" => 1.0,
            "twin-a" | "twin-b" => 0.75,
            _ => 0.2 + 0.03 * i as f64,
        };
        for t in 0..4 {
            let j = (i + 3 * t) % 8;
            let severity = (j % 3) as f64 * 0.03 - 0.03;
            let noise = ((i * 7 + j * 3) % 5) as f64 * 0.01 - 0.02;
            reviews.push(review(&judges[j], id, base + severity + noise));
        }
    }
    let inp = input(
        &ids.iter().map(String::as_str).collect::<Vec<_>>(),
        &judges.iter().map(String::as_str).collect::<Vec<_>>(),
        reviews,
    );
    let r = calibrate(&inp, &params(3, 400));
    check_invariants(&r, &inp);
    let c = r.certainty.as_ref().expect("v3 states its certainty");
    assert_eq!(c.draws, 400);
    assert_eq!(c.places.len(), CERTAINTY_PLACES);
    assert_eq!(c.pairs.len(), CERTAINTY_PLACES * (CERTAINTY_PLACES - 1) / 2);
    assert_eq!(c.places[0].project, "star");
    assert!(c.places[0].exact >= 0.95, "{:?}", c.places[0]);
    assert!(c.places.windows(2).all(|w| w[0].rank <= w[1].rank));
    for p in &c.places {
        assert!((0.0..=1.0).contains(&p.exact) && p.exact <= p.at_least && p.at_least <= 1.0);
    }
    let twins = c
        .pairs
        .iter()
        .find(|p| p.better.starts_with("twin") && p.worse.starts_with("twin"))
        .expect("both twins are in the top ten");
    assert!(
        (0.2..=0.8).contains(&twins.probability),
        "twins are a coin toss: {twins:?}"
    );
    let summary = r.diagnostics.summary.as_ref().expect("v3 writes a summary");
    assert!(
        summary
            .iter()
            .any(|l| l.starts_with("First place is clear: star")),
        "{summary:?}"
    );
    assert!(
        summary
            .iter()
            .any(|l| l.starts_with("Ranks 2 and 3 are not clearly ordered")),
        "{summary:?}"
    );
    let d = &r.diagnostics;
    assert!(d.convergence.as_ref().is_some_and(|c| c.passes == 3));
    let s = d.signal.as_ref().expect("v3 measures the signal");
    assert!(s.quality > 0.5 && s.quality_low <= s.quality && s.quality <= s.quality_high);
    assert!((s.quality + s.severity + s.noise - 1.0).abs() < 1e-9);
}

/// Engine v3 calls a judge `constant` only when equal scores are improbable for an
/// honest judge: ten equal totals on projects the others tell apart are; three equal
/// totals on three projects the others also find alike are not (rubric totals come in
/// steps of 1/12 here, as on a 3-criterion 1..5 rubric).
#[test]
fn equal_scores_are_constant_only_when_improbable() {
    let ids: Vec<String> = (0..12).map(|i| format!("p{i:02}")).collect();
    let step = |x: f64| (x * 12.0).round() / 12.0;
    let mut reviews = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        // The others spread the projects from 0.1 to 0.9, except three alike at 0.5.
        let quality = if (5..8).contains(&i) {
            0.5
        } else {
            0.1 + 0.07 * i as f64
        };
        for (t, j) in ["a", "b", "c"].into_iter().enumerate() {
            let noise = ((i * 5 + t * 3) % 5) as f64 * 0.04 - 0.08;
            reviews.push(review(j, id, step(quality + noise)));
        }
        if i < 10 {
            reviews.push(review("flat", id, 0.5));
        }
        if (5..8).contains(&i) {
            reviews.push(review("alike", id, 0.5));
        }
    }
    let inp = input(
        &ids.iter().map(String::as_str).collect::<Vec<_>>(),
        &["a", "b", "c", "flat", "alike"],
        reviews,
    );
    let r = calibrate(&inp, &params(1, 50));
    check_invariants(&r, &inp);
    let flag = |id: &str| r.judges.iter().find(|j| j.id == id).map(|j| j.flag.clone());
    assert_eq!(flag("flat").as_deref(), Some(FLAG_CONSTANT));
    assert_eq!(flag("alike").as_deref(), Some(FLAG_OK));
    // v2 called both constant.
    let v2 = calibrate_version(&inp, &params(1, 50), ENGINE_VERSION_2).expect("v2 is known");
    let flag2 = |id: &str| {
        v2.judges
            .iter()
            .find(|j| j.id == id)
            .map(|j| j.flag.clone())
    };
    assert_eq!(flag2("alike").as_deref(), Some(FLAG_CONSTANT));
}

/// Engine v5 tells the organizer when judges have too few reviews for the flags to vouch
/// for them (a random scorer with ten reviews is caught about four times in ten), and says
/// nothing of the kind where they have enough; v4's report stays as it was.
#[test]
fn a_panel_too_thin_to_check_its_judges_says_so() {
    let says = |r: &CalibrationResult| {
        r.diagnostics
            .summary
            .as_ref()
            .expect("a report")
            .iter()
            .any(|l| l.contains("too few for the flags"))
    };
    let small = Panel::generate(SynthParams::realistic(40, 12, 3, 5));
    let p = params(5, 20);
    let v5 = calibrate(&small.input, &p);
    assert!(says(&v5), "{:?}", v5.diagnostics.summary);
    let line = v5
        .diagnostics
        .summary
        .as_ref()
        .unwrap()
        .iter()
        .find(|l| l.contains("too few"))
        .unwrap()
        .clone();
    assert!(
        line.starts_with("Judges have 10 reviews each (median)"),
        "{line}"
    );
    let v4 = calibrate_version(&small.input, &p, ENGINE_VERSION_4).expect("v4 is known");
    assert!(!says(&v4), "{:?}", v4.diagnostics.summary);

    let large = Panel::generate(SynthParams::realistic(150, 40, 6, 5));
    let r = calibrate(&large.input, &p);
    assert!(!says(&r), "{:?}", r.diagnostics.summary);
}
