//! Links that say what they are: `link(kind, token)` reads an invitation, reset,
//! confirmation or team-join link without using it (the event, role, team and masked
//! address it is for, and whether it still works); an unknown token says only NOT_FOUND.

use serde_json::{Value, json};

use crate::harness::{App, PASSWORD, assert_code, op, str_at, unique};
use crate::invitations::{confirm_link, invitation_link, reset_link};

e2e! {
    a_link_says_what_it_is_and_when_it_no_longer_works,
}

const LINK: &str = "query($k: LinkKind!, $t: String!) {
    link(kind: $k, token: $t) { kind state expiresAt email role eventName eventSlug teamName } }";

async fn link(app: &App, kind: &str, token: &str) -> Value {
    let d = app.ok(None, LINK, json!({ "k": kind, "t": token })).await;
    d["link"].clone()
}

async fn a_link_says_what_it_is_and_when_it_no_longer_works(app: App) {
    let admin = app.site_admin().await;
    let t = unique();
    let slug = format!("links-{t}");
    app.create_event(&admin, &slug, 4).await;
    let event_name = format!("Event {slug}");

    // An invitation: event, role and the masked address, before anything is asked.
    let ada = format!("ada-{t}@example.org");
    app.ok(
        Some(&admin),
        op("InviteToEvent"),
        json!({ "event": slug, "emails": [ada], "role": "JUDGE" }),
    )
    .await;
    let token = invitation_link(&app, &admin, &slug, &ada).await;
    let probe = app.probe().await;
    let before = probe.snapshot().await;
    let l = link(&app, "INVITATION", &token).await;
    assert_eq!(l["kind"], "INVITATION");
    assert_eq!(l["state"], "VALID", "{l}");
    assert_eq!(l["email"], "a***@example.org");
    assert_eq!(l["role"], "JUDGE");
    assert_eq!(l["eventName"], event_name.as_str());
    assert_eq!(l["eventSlug"], slug.as_str());
    assert!(l["teamName"].is_null());
    assert!(l["expiresAt"].is_string());
    probe
        .nothing_written_since(&before, &[], "link(INVITATION)")
        .await;
    // Reading it did not use it: it is redeemed now, and then says so.
    app.ok(
        None,
        op("RedeemInvitation"),
        json!({ "token": token, "password": PASSWORD }),
    )
    .await;
    assert_eq!(link(&app, "INVITATION", &token).await["state"], "USED");

    // Revoked, and expired.
    let bo = format!("bo-{t}@example.org");
    let cy = format!("cy-{t}@example.org");
    let sent = app
        .ok(
            Some(&admin),
            op("InviteToEvent"),
            json!({ "event": slug, "emails": [bo, cy], "role": "PARTICIPANT" }),
        )
        .await;
    let bo_token = invitation_link(&app, &admin, &slug, &bo).await;
    let cy_token = invitation_link(&app, &admin, &slug, &cy).await;
    let bo_id = sent["inviteToEvent"]
        .as_array()
        .and_then(|a| a.iter().find(|i| i["email"] == bo.as_str()))
        .map(|i| i["id"].clone())
        .expect("bo's invitation");
    app.ok(Some(&admin), op("RevokeInvitation"), json!({ "id": bo_id }))
        .await;
    assert_eq!(
        link(&app, "INVITATION", &bo_token).await["state"],
        "REVOKED"
    );
    {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
        let db = app.db.connect().await;
        let past = chrono::Utc::now() - chrono::Duration::hours(1);
        entity::invitation::Entity::update_many()
            .col_expr(
                entity::invitation::Column::CreatedAt,
                Expr::value(past - chrono::Duration::days(1)),
            )
            .col_expr(entity::invitation::Column::ExpiresAt, Expr::value(past))
            .filter(entity::invitation::Column::Email.eq(cy.as_str()))
            .exec(&db.conn)
            .await
            .expect("expire the invitation");
    }
    let late = link(&app, "INVITATION", &cy_token).await;
    assert_eq!(late["state"], "EXPIRED", "{late}");
    assert_eq!(late["role"], "PARTICIPANT");

    // A reset link: the masked address and its state.
    let dee_email = format!("dee-{t}@example.org");
    app.ok(
        None,
        op("SignUp"),
        json!({ "email": dee_email, "password": PASSWORD, "displayName": "Dee" }),
    )
    .await;
    app.ok(
        None,
        op("RequestPasswordReset"),
        json!({ "email": dee_email }),
    )
    .await;
    let reset = reset_link(&app, &dee_email).await;
    let l = link(&app, "PASSWORD_RESET", &reset).await;
    assert_eq!(
        (l["state"].clone(), l["email"].clone()),
        (json!("VALID"), json!("d***@example.org")),
        "{l}"
    );
    assert!(l["eventName"].is_null() && l["role"].is_null());
    app.ok(
        None,
        op("ResetPassword"),
        json!({ "token": reset, "password": format!("{PASSWORD}-new") }),
    )
    .await;
    assert_eq!(link(&app, "PASSWORD_RESET", &reset).await["state"], "USED");

    // An email confirmation.
    let confirm = confirm_link(&app, &dee_email).await;
    let l = link(&app, "EMAIL_CONFIRMATION", &confirm).await;
    assert_eq!(l["email"], "d***@example.org", "{l}");
    app.ok(
        None,
        "mutation($t: String!) { confirmEmail(token: $t) }",
        json!({ "t": confirm }),
    )
    .await;
    assert_eq!(
        link(&app, "EMAIL_CONFIRMATION", &confirm).await["state"],
        "USED"
    );

    // A team's join code: the team and the event, no address.
    let (eve, _) = app.sign_up_full(&format!("eve-{t}@example.org")).await;
    app.register(&eve, &slug).await;
    let (_, code) = app.create_team(&eve, &slug, "The Linkers").await;
    let l = link(&app, "TEAM_JOIN", &code).await;
    assert_eq!(l["state"], "VALID", "{l}");
    assert_eq!(l["teamName"], "The Linkers");
    assert_eq!(l["eventName"], event_name.as_str());
    assert_eq!(l["role"], "PARTICIPANT");
    assert!(l["email"].is_null());

    // Unknown tokens, and a token asked as another kind, say only NOT_FOUND.
    for (kind, token) in [
        ("INVITATION", format!("vi_{}", "0".repeat(64))),
        ("PASSWORD_RESET", format!("vr_{}", "0".repeat(64))),
        ("EMAIL_CONFIRMATION", "nonsense".to_owned()),
        ("TEAM_JOIN", "zzzzzzzzzzzz".to_owned()),
        ("PASSWORD_RESET", token.clone()),
        ("INVITATION", code.clone()),
    ] {
        let r = app.gql(LINK, json!({ "k": kind, "t": token })).await;
        assert_code(&r, "NOT_FOUND");
        assert_eq!(str_at(&r, "/errors/0/message"), "link not found", "{r}");
        assert!(r["data"].is_null() || r["data"]["link"].is_null(), "{r}");
    }
}
