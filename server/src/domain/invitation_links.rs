//! Every pending invitation's link at once, for the organizers: how 200 judges get their
//! links without SMTP (a CSV for a mail merge, or a printed page of QR codes in the room).
//!
//! The links are the ones in the invitations' outbox messages (only a hash of a token is
//! stored with the invitation): for each pending invitation, its newest message that was
//! not cancelled. Handing out every link at once hands out every pending credential, so the
//! export is a mutation with its audit entry (`invitations.links_exported`), like the CSV
//! exports.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use entity::invitation::InvitationStatus;
use entity::outbox_message::Status;
use entity::{event, invitation, outbox_message};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::json;

use super::Role;
use super::write::{Organizer, Write};
use crate::audit::Entry;
use crate::error::AppResult;

/// One pending invitation and its link.
#[derive(Debug, Clone)]
pub struct InvitationLink {
    pub email: String,
    pub role: Role,
    pub link: String,
    pub expires_at: DateTime<Utc>,
}

/// The invitation link (`.../invite/TOKEN`) in a message's text.
fn link_in(body: &str) -> Option<&str> {
    body.split_whitespace()
        .find(|w| w.contains("/invite/") && w.starts_with("http"))
        .map(|w| w.trim_end_matches(['.', ',', ')', '>']))
}

/// The links of `e`'s pending invitations (not redeemed, revoked or expired), oldest
/// invitation first, for its organizers; appends one `invitations.links_exported` entry.
pub async fn export_links(
    w: &Write,
    org: Organizer<'_>,
    e: &event::Model,
) -> AppResult<Vec<InvitationLink>> {
    let txn = w.txn();
    let now = w.now();
    let pending: Vec<invitation::Model> = invitation::Entity::find()
        .filter(invitation::Column::EventId.eq(e.id))
        .order_by_asc(invitation::Column::Id)
        .all(txn)
        .await?
        .into_iter()
        .filter(|i| i.status(now) == InvitationStatus::Pending)
        .collect();
    // The newest message of each invitation that still counts.
    let mut newest: HashMap<i64, outbox_message::Model> = HashMap::new();
    for m in outbox_message::Entity::find()
        .filter(outbox_message::Column::EventId.eq(e.id))
        .filter(outbox_message::Column::InvitationId.is_not_null())
        .filter(outbox_message::Column::Status.ne(Status::Cancelled))
        .order_by_asc(outbox_message::Column::Id)
        .all(txn)
        .await?
    {
        if let Some(i) = m.invitation_id {
            newest.insert(i, m);
        }
    }
    let links: Vec<InvitationLink> = pending
        .into_iter()
        .filter_map(|i| {
            let link = link_in(&newest.get(&i.id)?.body_text)?.to_owned();
            Some(InvitationLink {
                email: i.email,
                role: i.role,
                link,
                expires_at: i.expires_at,
            })
        })
        .collect();
    w.append(
        Entry::new("invitations.links_exported", "event", &e.public_id)
            .by(org.actor().public_id())
            .in_event(&e.external_id)
            .with(json!({ "count": links.len() })),
    )
    .await?;
    Ok(links)
}

/// `text` as a QR code, an SVG document (black on white, at least 200 px square), or
/// None when it is too long for a QR code.
pub fn qr_svg(text: &str) -> Option<String> {
    let code = qrcode::QrCode::new(text.as_bytes()).ok()?;
    Some(
        code.render::<qrcode::render::svg::Color<'_>>()
            .min_dimensions(200, 200)
            .quiet_zone(true)
            .build(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_link_in_a_message() {
        let body = "Hello,\n\nYou are invited. Open https://hack.example.org/invite/abc_123.\nIt expires soon.";
        assert_eq!(
            link_in(body),
            Some("https://hack.example.org/invite/abc_123")
        );
        assert_eq!(link_in("no link here"), None);
    }

    #[test]
    fn renders_a_link_as_an_svg_qr_code() {
        let svg = qr_svg("https://hack.example.org/invite/abc_123").expect("fits");
        assert!(
            svg.starts_with("<?xml") || svg.starts_with("<svg"),
            "{}",
            &svg[..40]
        );
        assert!(svg.contains("<svg") && svg.contains("</svg>"));
        assert!(qr_svg(&"x".repeat(8000)).is_none());
    }
}
