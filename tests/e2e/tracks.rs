//! Setting an event up without a stumble: tracks renamed, and removed only while nothing
//! uses them; refusals that name the value at fault (the bad address in a batch of
//! invitations, the criterion whose bounds are wrong); every pending invitation's link at
//! once.

use serde_json::json;

use crate::harness::{App, assert_bad_input, assert_code, error_message, op};

e2e! {
    tracks_are_renamed_and_removed_only_while_unused,
    refusals_name_the_value_at_fault,
    every_pending_link_comes_out_at_once_with_its_qr_code,
}

const RENAME: &str =
    "mutation($id: ID!, $n: String!) { renameTrack(id: $id, name: $n) { id name } }";
const DELETE: &str = "mutation($id: ID!) { deleteTrack(id: $id) }";
const TRACKS: &str = "query($e: String!) { event(slug: $e) { tracks { id name } } }";

async fn tracks_are_renamed_and_removed_only_while_unused(app: App) {
    let s = app.scenario().await;
    let org = Some(s.organizer_a.as_str());

    // Renamed: trimmed, seen by everyone.
    let d = app
        .ok(org, RENAME, json!({ "id": s.track_a, "n": "  Hardware " }))
        .await;
    assert_eq!(d["renameTrack"]["name"], "Hardware");
    let t = app.ok(None, TRACKS, json!({ "e": s.event_a })).await;
    assert!(
        t["event"]["tracks"]
            .as_array()
            .expect("tracks")
            .iter()
            .any(|t| t["name"] == "Hardware")
    );
    assert_bad_input(
        &app.gql_as(&s.organizer_a, RENAME, json!({ "id": s.track_a, "n": " " }))
            .await,
        &["name"],
    );
    assert_code(
        &app.gql_as(
            &s.organizer_a,
            RENAME,
            json!({ "id": s.track_a, "n": "Hardware" }),
        )
        .await,
        "CONFLICT",
    );
    // Only the event's organizers.
    for who in [&s.organizer_b, &s.participant_a, &s.judge_a] {
        assert_code(
            &app.gql_as(who, RENAME, json!({ "id": s.track_a, "n": "Mine" }))
                .await,
            "FORBIDDEN",
        );
    }

    // In use by the scenario's projects (a draft among them): refused, naming them.
    let r = app
        .gql_as(&s.organizer_a, DELETE, json!({ "id": s.track_a }))
        .await;
    assert_code(&r, "CONFLICT");
    let m = error_message(&r);
    assert!(
        m.contains("2 projects") && m.contains("Draft project") && m.contains("Hardware"),
        "the refusal names the track and what uses it: {r}"
    );

    // An unused track goes; a prize on a track keeps it.
    let spare = app.create_track(&s.organizer_a, &s.event_a, "Spare").await;
    let d = app.ok(org, DELETE, json!({ "id": spare })).await;
    assert_eq!(d["deleteTrack"], spare.as_str());
    let t = app.ok(None, TRACKS, json!({ "e": s.event_a })).await;
    assert!(!t["event"]["tracks"].to_string().contains(&spare));
    assert_code(
        &app.gql_as(&s.organizer_a, DELETE, json!({ "id": spare }))
            .await,
        "NOT_FOUND",
    );
    let prized = app.create_track(&s.organizer_a, &s.event_a, "Prized").await;
    app.ok(
        org,
        "mutation($e: String!, $i: PrizeInput!) { createPrize(event: $e, input: $i) { id } }",
        json!({ "e": s.event_a, "i": { "name": "Best gadget", "track": prized, "position": 1 } }),
    )
    .await;
    let r = app
        .gql_as(&s.organizer_a, DELETE, json!({ "id": prized }))
        .await;
    assert_code(&r, "CONFLICT");
    assert!(error_message(&r).contains("Best gadget"), "{r}");
}

async fn refusals_name_the_value_at_fault(app: App) {
    let s = app.scenario().await;
    // One bad address among three: the batch is refused, naming it and where it is.
    let r = app
        .gql_as(
            &s.organizer_a,
            op("InviteToEvent"),
            json!({ "event": s.event_a, "role": "JUDGE",
                    "emails": ["ok-1@example.org", "not an address", "ok-2@example.org"] }),
        )
        .await;
    assert_bad_input(&r, &["emails"]);
    let m = error_message(&r);
    assert!(
        m.contains("\"not an address\"") && m.contains("2 of 3"),
        "the refusal names the address and its place: {r}"
    );

    // A criterion whose bounds are wrong is named.
    let r = app
        .gql_as(
            &s.organizer_a,
            op("SetCriterion"),
            json!({ "event": s.event_a, "input": {
                "key": "wow", "name": "Wow", "weight": 1.0, "min": 5, "max": 5, "position": 1 } }),
        )
        .await;
    assert_bad_input(&r, &["max"]);
    assert!(error_message(&r).contains("\"wow\""), "{r}");
}

const LINKS: &str = "mutation($e: String!) { exportInvitationLinks(event: $e) { email role link expiresAt qrSvg } }";

/// Every pending invitation's link at once: the ones the outbox holds, not the redeemed or
/// revoked ones, each with a QR code; audited; organizers only.
async fn every_pending_link_comes_out_at_once_with_its_qr_code(app: App) {
    let s = app.scenario().await;
    let tag = crate::harness::unique();
    let emails: Vec<String> = (1..=3)
        .map(|i| format!("judge-{i}-{tag}@example.org"))
        .collect();
    let d = app
        .ok(
            Some(&s.organizer_a),
            op("InviteToEvent"),
            json!({ "event": s.event_a, "role": "JUDGE", "emails": emails }),
        )
        .await;
    let third = d["inviteToEvent"][2]["id"]
        .as_str()
        .expect("invitation id")
        .to_owned();
    app.ok(
        Some(&s.organizer_a),
        "mutation($id: ID!) { revokeInvitation(id: $id) { id } }",
        json!({ "id": third }),
    )
    .await;

    let head = app.audit_head().await;
    let d = app
        .ok(Some(&s.organizer_a), LINKS, json!({ "e": s.event_a }))
        .await;
    assert_eq!(app.audit_head().await, head + 1, "the export is audited");
    let rows = d["exportInvitationLinks"].as_array().expect("links");
    let got: Vec<&str> = rows.iter().filter_map(|r| r["email"].as_str()).collect();
    assert_eq!(
        got,
        vec![emails[0].as_str(), emails[1].as_str()],
        "pending ones only: {d}"
    );
    for r in rows {
        assert_eq!(r["role"], "JUDGE");
        let link = r["link"].as_str().expect("link");
        assert!(link.contains("/invite/"), "{link}");
        let svg = r["qrSvg"].as_str().expect("svg");
        assert!(svg.contains("<svg") && svg.contains("</svg>"), "{svg}");
    }
    // The link works: it redeems the invitation, which then leaves the list.
    let link = rows[0]["link"].as_str().expect("link");
    let token = link.rsplit('/').next().expect("token");
    app.ok(
        None,
        "mutation($t: String!, $p: String, $n: String) { redeemInvitation(token: $t, password: $p, displayName: $n) { token } }",
        json!({ "t": token, "p": crate::harness::PASSWORD, "n": "Judge One" }),
    )
    .await;
    let d = app
        .ok(Some(&s.organizer_a), LINKS, json!({ "e": s.event_a }))
        .await;
    assert_eq!(
        d["exportInvitationLinks"].as_array().map(Vec::len),
        Some(1),
        "{d}"
    );

    for who in [&s.organizer_b, &s.judge_a, &s.participant_a] {
        assert_code(
            &app.gql_as(who, LINKS, json!({ "e": s.event_a })).await,
            "FORBIDDEN",
        );
    }
}
