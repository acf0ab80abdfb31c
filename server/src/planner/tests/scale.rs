//! Large events: a mid-sized one checked whole, and the size target (ignored; run with
//! `--release`).

use super::*;

fn scale_instance() -> (Vec<PlanProject>, Vec<PlanJudge>) {
    let mut rng = SplitMix64::new(7);
    let tracks = 12;
    let projects = (0..2000)
        .map(|i| {
            proj(
                &format!("p{i:04}"),
                &format!("t{}", rng.below(tracks)),
                &format!("team{i}"),
                &[],
            )
        })
        .collect();
    let judges = (0..300)
        .map(|i| {
            let mut j = judge(&format!("j{i:03}"), &[], 0);
            if i % 3 != 0 {
                for _ in 0..1 + rng.below(3) {
                    j.tracks.push(format!("t{}", rng.below(tracks)));
                }
            }
            if i % 10 == 0 {
                j.recused_teams.push(format!("team{}", rng.below(2000)));
            }
            j
        })
        .collect();
    (projects, judges)
}

#[test]
fn mid_scale_is_valid() {
    let (projects, judges) = scale_instance();
    let (projects, judges) = (&projects[..400], &judges[..60]);
    let out = plan(projects, judges, 5, None, 1);
    check(projects, judges, 5, None, &out, false);
    assert!(out.coverage.iter().all(|c| c.assigned == 5));
    assert_eq!(out.components, 1);
}

/// `cargo test --release -- --ignored --nocapture scale`
#[test]
#[ignore]
fn scale_2000_projects_300_judges() {
    let (projects, judges) = scale_instance();
    for (label, max_load) in [("no max_load", None), ("max_load 30", Some(30))] {
        let start = Instant::now();
        let out = plan(&projects, &judges, 5, max_load, 99);
        let took = start.elapsed();
        check(&projects, &judges, 5, max_load, &out, false);
        let loads: Vec<usize> = out.loads.iter().map(|(_, l)| *l).collect();
        let any: Vec<usize> = judges
            .iter()
            .zip(&loads)
            .filter(|(j, _)| j.tracks.is_empty())
            .map(|(_, l)| *l)
            .collect();
        println!(
            "{label}: {took:?}, {} edges, shortfall {}, loads {}..{} (any-track {}..{}), \
             components {}, max pair overlap {}",
            out.edges.len(),
            out.total_shortfall(),
            loads.iter().min().unwrap_or(&0),
            loads.iter().max().unwrap_or(&0),
            any.iter().min().unwrap_or(&0),
            any.iter().max().unwrap_or(&0),
            out.components,
            max_pair_overlap(&projects, &out),
        );
        assert!(took.as_secs_f64() < 1.0);
        let start = Instant::now();
        let (p2, j2) = apply(&projects, &judges, &out);
        let again = plan(&p2, &j2, 5, max_load, 99);
        println!(
            "  re-plan: {:?}, {} new edges",
            start.elapsed(),
            again.edges.len()
        );
        assert!(again.edges.is_empty());
    }
    // Worst case for the connect phase: 12 tracks, every judge dedicated to one.
    let projects: Vec<PlanProject> = (0..2000)
        .map(|i| {
            proj(
                &format!("p{i:04}"),
                &format!("t{}", i % 12),
                &format!("team{i}"),
                &[],
            )
        })
        .collect();
    let judges: Vec<PlanJudge> = (0..300)
        .map(|i| judge(&format!("j{i:03}"), &[&format!("t{}", i % 12)], 0))
        .collect();
    let start = Instant::now();
    let out = plan(&projects, &judges, 5, None, 99);
    let took = start.elapsed();
    println!(
        "dedicated judges only: {took:?}, shortfall {}, components {} (honest)",
        out.total_shortfall(),
        out.components
    );
    assert_eq!(out.components, 12);
    assert!(took.as_secs_f64() < 1.0);
}
