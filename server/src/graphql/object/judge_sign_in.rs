//! A judge's standing sign-in (`crate::domain::judge_sign_in`): as issued (the link and
//! code, shown once to the event's organizers) and as it stands afterwards (when it was
//! issued and last used: never the link or code again).

use async_graphql::{Context, Object};
use chrono::{DateTime, Utc};

use super::user::Membership;
use crate::domain::invitation_links::qr_svg;
use crate::domain::judge_sign_in::Issued;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("IssuedJudgeSignIn.judge", Rule::Organizer),
    ("IssuedJudgeSignIn.name", Rule::Organizer),
    ("IssuedJudgeSignIn.email", Rule::Organizer),
    ("IssuedJudgeSignIn.link", Rule::Organizer),
    ("IssuedJudgeSignIn.code", Rule::Organizer),
    ("IssuedJudgeSignIn.issuedAt", Rule::Organizer),
    ("IssuedJudgeSignIn.qrSvg", Rule::Organizer),
    ("JudgeSignInSheet.signIns", Rule::Organizer),
    ("JudgeSignInSheet.csv", Rule::Organizer),
    ("JudgeSignIn.issuedAt", Rule::Organizer),
    ("JudgeSignIn.lastUsedAt", Rule::Organizer),
    ("Membership.standingSignIn", Rule::Organizer),
];

/// A judge's standing sign-in as issued: the link and the code are shown this once (only
/// their hashes are kept), so hand them to the judge now.
pub struct IssuedJudgeSignIn(pub Issued);

/// A judge's standing sign-in as issued: the link and the code are shown this once (only
/// their hashes are kept), so hand them to the judge now.
#[Object(guard = "FieldGuard::new(\"IssuedJudgeSignIn\", Scope::event(self.0.judge.event_id))")]
impl IssuedJudgeSignIn {
    /// The judge it signs in as.
    async fn judge(&self) -> Membership {
        Membership(self.0.judge.clone())
    }
    /// The judge's display name.
    async fn name(&self) -> &str {
        &self.0.user.display_name
    }
    /// The judge's email.
    async fn email(&self) -> &str {
        &self.0.user.email
    }
    /// The standing link, `{public-url}/judge-sign-in/{token}`: one tap signs the judge in.
    async fn link(&self) -> &str {
        &self.0.link
    }
    /// The short code (`K7QM-P2XD`) the judge can type with the event's slug on
    /// `/judge-sign-in` instead; case and dashes do not matter.
    async fn code(&self) -> &str {
        &self.0.code
    }
    /// When it was issued.
    async fn issued_at(&self) -> DateTime<Utc> {
        self.0.issued_at
    }
    /// The link as a QR code (an SVG document) to print for the room.
    async fn qr_svg(&self) -> Option<String> {
        qr_svg(&self.0.link)
    }
}

/// Every judge's new standing sign-in at once, and the same as a CSV file.
pub struct JudgeSignInSheet {
    pub event_id: i64,
    pub issued: Vec<Issued>,
    pub csv: String,
}

/// Every judge's new standing sign-in at once, and the same as a CSV file.
#[Object(guard = "FieldGuard::new(\"JudgeSignInSheet\", Scope::event(self.event_id))")]
impl JudgeSignInSheet {
    /// Each judge's link and code, in the order they became judges.
    async fn sign_ins(&self) -> Vec<IssuedJudgeSignIn> {
        self.issued.iter().cloned().map(IssuedJudgeSignIn).collect()
    }
    /// The same as CSV (`judge_name,judge_email,judge_id,link,code`), cells a spreadsheet
    /// would run as formulas neutralized like the exports'.
    async fn csv(&self) -> &str {
        &self.csv
    }
}

/// A judge's live standing sign-in, as organizers see it: never the link or the code.
pub struct JudgeSignIn {
    pub event_id: i64,
    pub row: entity::judge_sign_in::Model,
}

/// A judge's live standing sign-in, as organizers see it: never the link or the code.
#[Object(guard = "FieldGuard::new(\"JudgeSignIn\", Scope::event(self.event_id))")]
impl JudgeSignIn {
    /// When it was issued.
    async fn issued_at(&self) -> DateTime<Utc> {
        self.row.created_at
    }
    /// When the judge last signed in with it; null until they do.
    async fn last_used_at(&self) -> Option<DateTime<Utc>> {
        self.row.last_used_at
    }
}

/// `Membership.standingSignIn`, resolved here so the membership object stays small.
pub async fn standing_sign_in(
    ctx: &Context<'_>,
    m: &entity::membership::Model,
) -> async_graphql::Result<Option<JudgeSignIn>> {
    use crate::graphql::loaders::{LoadersExt, MembershipId, maybe};
    if m.role != entity::membership::Role::Judge {
        return Ok(None);
    }
    Ok(
        maybe(ctx, ctx.loaders().judge_sign_ins(), MembershipId(m.id))
            .await?
            .map(|row| JudgeSignIn {
                event_id: m.event_id,
                row,
            }),
    )
}
