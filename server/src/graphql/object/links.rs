//! What a link is, read without using it: the first-run setup link and the one-time links
//! people are sent (invitation, reset, confirmation, team join). Public by design: the
//! token is the credential, an unknown token answers NOT_FOUND, and a known one tells only
//! what its mail said (see [`crate::domain::links`]).

use async_graphql::{Enum, Object};
use chrono::{DateTime, Utc};

use super::user::Role;
use crate::domain::links::LinkInfo;
use crate::graphql::policy::{FieldGuard, Rule, Scope};

/// Who may read each field of the types in this file, collected by [`crate::graphql::policy`].
pub(crate) const POLICIES: &[(&str, Rule)] = &[
    ("SetupLink.state", Rule::Public),
    ("SetupLink.expiresAt", Rule::Public),
    ("Link.kind", Rule::Public),
    ("Link.state", Rule::Public),
    ("Link.expiresAt", Rule::Public),
    // Masked in the domain: `a***@example.com`.
    ("Link.email", Rule::Public),
    ("Link.role", Rule::Public),
    ("Link.eventName", Rule::Public),
    ("Link.eventSlug", Rule::Public),
    ("Link.teamName", Rule::Public),
];

/// The kinds of link people are sent, each with its page in the web client.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "crate::domain::links::LinkKind")]
pub enum LinkKind {
    /// `/invite/{token}`: a role in an event (a participant's may name a team).
    Invitation,
    /// `/reset/{token}`: a new password.
    PasswordReset,
    /// `/confirm/{token}`: proves an address is the account's.
    EmailConfirmation,
    /// `/join/{code}`: a team's shared join code.
    TeamJoin,
    /// `/judge-sign-in/{token}`: a judge's standing sign-in link. Never USED (it works
    /// until revoked or replaced, REVOKED, also once the judge role is gone); EXPIRED once
    /// the event's judging has closed.
    JudgeSignIn,
}

/// A link someone was sent, as its page shows it before asking for anything.
pub struct Link(pub LinkInfo);

/// A link someone was sent, as its page shows it before asking for anything.
#[Object(guard = "FieldGuard::new(\"Link\", Scope { public: true, ..Scope::none() })")]
impl Link {
    /// What kind of link it is.
    async fn kind(&self) -> LinkKind {
        self.0.kind.into()
    }
    /// Whether using it now would work, or why not.
    async fn state(&self) -> LinkState {
        self.0.state.into()
    }
    /// When it stops working (a team's join code: its expiry or the submission deadline).
    async fn expires_at(&self) -> Option<DateTime<Utc>> {
        self.0.expires_at
    }
    /// The address it was sent to, masked (`a***@example.com`); null for a team's join code.
    async fn email(&self) -> Option<&str> {
        self.0.masked_email.as_deref()
    }
    /// The role it gives in the event (invitations and team joins).
    async fn role(&self) -> Option<Role> {
        self.0.role.map(Into::into)
    }
    /// The event it is for (invitations and team joins).
    async fn event_name(&self) -> Option<&str> {
        self.0.event.as_ref().map(|e| e.name.as_str())
    }
    /// The slug of the event it is for (invitations and team joins).
    async fn event_slug(&self) -> Option<&str> {
        self.0.event.as_ref().map(|e| e.slug.as_str())
    }
    /// The team it joins (team joins, and a team's invitation).
    async fn team_name(&self) -> Option<&str> {
        self.0.team.as_deref()
    }
}

/// Where a one-time link stands.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
#[graphql(remote = "crate::domain::links::LinkState")]
pub enum LinkState {
    /// It works: using it now would succeed.
    Valid,
    /// It was used; it works once.
    Used,
    /// Its time ran out.
    Expired,
    /// It was withdrawn: an invitation revoked or sent again with a new link, or a setup
    /// link made moot because an account exists.
    Revoked,
}

/// The first-run setup link that `serve` prints while no account exists.
pub struct SetupLink {
    pub state: LinkState,
    pub expires_at: DateTime<Utc>,
}

/// The first-run setup link that `serve` prints while no account exists.
#[Object(guard = "FieldGuard::new(\"SetupLink\", Scope { public: true, ..Scope::none() })")]
impl SetupLink {
    /// Whether `setUpSite` would accept the link now.
    async fn state(&self) -> LinkState {
        self.state
    }
    /// When the link stops working.
    async fn expires_at(&self) -> DateTime<Utc> {
        self.expires_at
    }
}
