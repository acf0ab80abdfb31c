use super::*;

/// The account's own settings: confirming its address (until then no role is granted to
/// it by email), the password, the name and the address.
pub(super) async fn account_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    org: Option<&str>,
    org_email: &str,
    event: &str,
) {
    use crate::invitations::confirm_link;
    let grant = json!({ "event": event, "email": org_email, "role": "ORGANIZER" });
    steps
        .step(
            Refused,
            "grantRole (unconfirmed)",
            admin,
            op("GrantRole"),
            grant,
        )
        .await;
    steps
        .step(
            Succeeds,
            "resendConfirmation",
            org,
            op("ResendConfirmation"),
            json!({}),
        )
        .await;
    let token = json!({ "token": confirm_link(steps.app, org_email).await });
    steps
        .step(
            Succeeds,
            "confirmEmail",
            None,
            op("ConfirmEmail"),
            token.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "confirmEmail (used)",
            None,
            op("ConfirmEmail"),
            token,
        )
        .await;
    steps
        .step(
            Refused,
            "resendConfirmation (confirmed)",
            org,
            op("ResendConfirmation"),
            json!({}),
        )
        .await;
    let change = |current: &str| json!({ "currentPassword": current, "newPassword": PASSWORD });
    steps
        .step(
            Succeeds,
            "changePassword",
            org,
            op("ChangePassword"),
            change(PASSWORD),
        )
        .await;
    steps
        .step(
            Refused,
            "changePassword (wrong current)",
            org,
            op("ChangePassword"),
            change("not the password"),
        )
        .await;
    let name = |n: &str| json!({ "displayName": n });
    steps
        .step(
            Succeeds,
            "updateProfile",
            org,
            op("UpdateProfile"),
            name("Org"),
        )
        .await;
    steps
        .step(
            Refused,
            "updateProfile (empty)",
            org,
            op("UpdateProfile"),
            name(" "),
        )
        .await;
    let new_email = |e: &str| json!({ "newEmail": e, "currentPassword": PASSWORD });
    steps
        .step(
            Succeeds,
            "changeEmail",
            org,
            op("ChangeEmail"),
            new_email(&format!("moved-{org_email}")),
        )
        .await;
    steps
        .step(
            Refused,
            "changeEmail (taken)",
            org,
            op("ChangeEmail"),
            new_email("root@example.org"),
        )
        .await;
}

/// Hiding, disqualifying and marking duplicates: `admin` organizes `event`, `p` made
/// `project` on `track`.
pub(super) async fn moderation_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    p: Option<&str>,
    event: &str,
    project: &str,
    track: &str,
) {
    let app = steps.app;
    let other = app
        .ok(
            p,
            op("CreateProject"),
            json!({ "event": event, "input": { "title": "Copy", "track": track } }),
        )
        .await;
    let other = str_at(&other, "/createProject/id");
    let id = json!({ "id": project });
    let why = json!({ "id": project, "reason": "spam" });
    let pairs: [(&str, &str, Value, &str, Value); 6] = [
        (
            "hideProject",
            op("HideProject"),
            why.clone(),
            op("HideProject"),
            why.clone(),
        ),
        (
            "unhideProject",
            op("UnhideProject"),
            id.clone(),
            op("UnhideProject"),
            id.clone(),
        ),
        (
            "disqualifyProject",
            op("DisqualifyProject"),
            why.clone(),
            op("DisqualifyProject"),
            why,
        ),
        (
            "requalifyProject",
            op("RequalifyProject"),
            id.clone(),
            op("RequalifyProject"),
            id,
        ),
        (
            "markDuplicate",
            op("MarkDuplicate"),
            json!({ "id": other, "of": project }),
            op("MarkDuplicate"),
            json!({ "id": other, "of": project }),
        ),
        (
            "clearDuplicate",
            op("ClearDuplicate"),
            json!({ "id": other }),
            op("ClearDuplicate"),
            json!({ "id": other }),
        ),
    ];
    // Each succeeds for the organizer, then is refused the second time (nothing to
    // change: CONFLICT) or for the participant.
    for (name, query, vars, again, again_vars) in pairs {
        steps
            .step(
                Refused,
                &format!("{name} (participant)"),
                p,
                query,
                vars.clone(),
            )
            .await;
        steps.step(Succeeds, name, admin, query, vars).await;
        steps
            .step(
                Refused,
                &format!("{name} (again)"),
                admin,
                again,
                again_vars,
            )
            .await;
    }
    let second = app
        .create_track(admin.expect("admin"), event, "Second track")
        .await;
    let mv = json!({ "id": project, "track": second, "reason": "fits better" });
    steps
        .step(
            Succeeds,
            "changeProjectTrack",
            admin,
            op("ChangeProjectTrack"),
            mv.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "changeProjectTrack (there already)",
            admin,
            op("ChangeProjectTrack"),
            mv,
        )
        .await;
    let table = json!({ "project": project, "table": "12" });
    steps
        .step(
            Succeeds,
            "setProjectTable",
            admin,
            op("SetProjectTable"),
            table.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "setProjectTable (there already)",
            admin,
            op("SetProjectTable"),
            table,
        )
        .await;
}

/// A judge's standing sign-in: issued (one judge, every judge), used (link, code),
/// revoked. `admin` organizes `event`, `p` is a participant.
pub(super) async fn judge_sign_in_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    p: Option<&str>,
    event: &str,
    t: &str,
) {
    let app = steps.app;
    let email = format!("standing-judge-{t}@example.org");
    app.sign_up(&email).await;
    let judge = app
        .grant(admin.expect("admin"), event, &email, "JUDGE")
        .await;
    let one = json!({ "event": event, "judge": judge });
    steps
        .step(
            Refused,
            "issueJudgeSignIn (not an organizer)",
            p,
            op("IssueJudgeSignIn"),
            one.clone(),
        )
        .await;
    steps
        .step(
            Succeeds,
            "issueJudgeSignIn",
            admin,
            op("IssueJudgeSignIn"),
            one.clone(),
        )
        .await;
    let all = json!({ "event": event });
    steps
        .step(
            Refused,
            "issueJudgeSignIns (not an organizer)",
            p,
            op("IssueJudgeSignIns"),
            all.clone(),
        )
        .await;
    let r = steps
        .step(
            Succeeds,
            "issueJudgeSignIns",
            admin,
            op("IssueJudgeSignIns"),
            all,
        )
        .await;
    let mine = r["data"]["issueJudgeSignIns"]["signIns"]
        .as_array()
        .expect("sign-ins")
        .iter()
        .find(|s| s["email"] == email.as_str())
        .cloned()
        .expect("the judge's new link");
    let token = str_at(&mine, "/link")
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned();
    steps
        .step(
            Succeeds,
            "signInAsJudge",
            None,
            op("SignInAsJudge"),
            json!({ "token": token }),
        )
        .await;
    steps
        .step(
            Refused,
            "signInAsJudge (unknown link)",
            None,
            op("SignInAsJudge"),
            json!({ "token": format!("vjs_{}", "0".repeat(40)) }),
        )
        .await;
    let code = json!({ "event": event, "code": str_at(&mine, "/code") });
    steps
        .step(
            Succeeds,
            "signInAsJudgeByCode",
            None,
            op("SignInAsJudgeByCode"),
            code,
        )
        .await;
    steps
        .step(
            Refused,
            "signInAsJudgeByCode (wrong code)",
            None,
            op("SignInAsJudgeByCode"),
            json!({ "event": event, "code": "ZZZZ-ZZZZ" }),
        )
        .await;
    steps
        .step(
            Succeeds,
            "revokeJudgeSignIn",
            admin,
            op("RevokeJudgeSignIn"),
            one.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "revokeJudgeSignIn (none live)",
            admin,
            op("RevokeJudgeSignIn"),
            one,
        )
        .await;
}

/// Invitations and password reset: `admin` organizes `event`, `p` is a participant.
pub(super) async fn people_steps(
    steps: &mut Steps<'_>,
    admin: Option<&str>,
    p: Option<&str>,
    event: &str,
    t: &str,
) {
    use crate::invitations::{invitation_link, reset_link};
    let app = steps.app;
    let invitee = format!("invitee-{t}@example.org");
    let invite = |email: &str| json!({ "event": event, "emails": [email], "role": "JUDGE" });
    steps
        .step(
            Succeeds,
            "inviteToEvent",
            admin,
            op("InviteToEvent"),
            invite(&invitee),
        )
        .await;
    steps
        .step(
            Refused,
            "inviteToEvent (not an organizer)",
            p,
            op("InviteToEvent"),
            invite(&invitee),
        )
        .await;
    let token = invitation_link(app, admin.expect("admin"), event, &invitee).await;
    let redeem = json!({ "token": token, "password": PASSWORD, "displayName": "Invitee" });
    steps
        .step(
            Succeeds,
            "redeemInvitation",
            None,
            op("RedeemInvitation"),
            redeem.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "redeemInvitation (used)",
            None,
            op("RedeemInvitation"),
            redeem,
        )
        .await;
    let r = steps
        .step(
            Succeeds,
            "inviteToEvent (another)",
            admin,
            op("InviteToEvent"),
            invite(&format!("second-{t}@example.org")),
        )
        .await;
    let id = json!({ "id": str_at(&r, "/data/inviteToEvent/0/id") });
    steps
        .step(
            Succeeds,
            "resendInvitation",
            admin,
            op("ResendInvitation"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Succeeds,
            "revokeInvitation",
            admin,
            op("RevokeInvitation"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "revokeInvitation (again)",
            admin,
            op("RevokeInvitation"),
            id.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "resendInvitation (revoked)",
            admin,
            op("ResendInvitation"),
            id,
        )
        .await;
    let ev = json!({ "event": event });
    steps
        .step(
            Succeeds,
            "inviteImported",
            admin,
            op("InviteImported"),
            ev.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "inviteImported (not an organizer)",
            p,
            op("InviteImported"),
            ev,
        )
        .await;
    steps
        .step(
            Succeeds,
            "requestPasswordReset",
            None,
            op("RequestPasswordReset"),
            json!({ "email": invitee }),
        )
        .await;
    steps
        .step(
            Refused,
            "requestPasswordReset (not an email)",
            None,
            op("RequestPasswordReset"),
            json!({ "email": "nobody" }),
        )
        .await;
    let reset =
        json!({ "token": reset_link(app, &invitee).await, "password": "another password 123" });
    steps
        .step(
            Succeeds,
            "resetPassword",
            None,
            op("ResetPassword"),
            reset.clone(),
        )
        .await;
    steps
        .step(
            Refused,
            "resetPassword (used)",
            None,
            op("ResetPassword"),
            reset,
        )
        .await;
}
