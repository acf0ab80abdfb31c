//! Judging end to end: the rubric, assignments, private reviews, the signed calibration
//! run, publication, offline verification of the exported bundle, exports and the
//! authorization of every judging field.

use std::sync::atomic::{AtomicBool, Ordering};

use chrono::{Duration, Utc};
use entity::event;
use serde_json::{Value, json};

use crate::harness::{
    App, CALLERS, Caller, HeldChange, Scenario, assert_bad_input, assert_code, data, error_code,
    error_message, fixture_path, op, rfc3339, str_at, unique,
};

mod offline;
use offline::*;
mod windows;
use windows::*;
mod reviews;
use reviews::*;
mod access;
use access::*;

const FIXTURE_SLUG: &str = "spring-hack-2026";

e2e! {
    fixture_calibrates_publishes_and_verifies_offline,
    judges_review_privately_inside_the_window,
    a_withdrawn_project_leaves_its_judges_queues_working,
    auto_assign_plans_then_applies_once,
    exports_neutralize_formulas_and_are_audited,
    judging_fields_follow_the_authorization_matrix,
    results_subscription_fires_after_publication,
    every_review_save_keeps_a_revision,
    judges_are_never_on_a_team_they_judge,
    a_judging_window_closed_while_a_save_waits_refuses_it,
    two_saves_of_one_review_at_once_keep_both_scores,
}

e2e_postgres! {
    a_save_does_not_wait_for_another_judges_save,
}

async fn import_fixture(app: &App) {
    let path = fixture_path();
    let out = app
        .cli(&["import", path.to_str().expect("utf-8 path")])
        .await;
    assert!(out.success(), "import: {out:?}");
}

/// The variables of the fixture's calibration run: a fixed seed, 100 bootstrap rounds.
fn run_vars() -> Value {
    json!({ "event": FIXTURE_SLUG, "seed": 7, "bootstrap": 100 })
}
