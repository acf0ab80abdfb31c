//! Per-field authorization, declared once per field: each object, root and mutation file
//! declares its fields' rules in a `POLICIES` table, and `graphql::registry` collects them
//! into the [`Rules`] the schema carries.
//!
//! Every output object carries a [`Scope`]: the event that owns it and, where it matters,
//! its team, its owner, and whether it is public. Every object type installs
//! [`FieldGuard`] as its object-level guard, so every field of it is checked against its
//! declared [`Rule`] before it resolves; a field without a declared rule is refused (fail
//! closed), and a test walks the whole schema to make sure none exists.
//!
//! A caller's rights come only from their membership rows ([`crate::domain::Access`]),
//! never from an argument. An object the caller may not see is reported the same way as a
//! missing one: queries return null, mutations fail with NOT_FOUND.

use async_graphql::{Context, Guard};

use super::context::CtxExt;
use crate::error::AppError;

/// Who may read a field.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Anyone, signed in or not.
    Public,
    /// Any signed-in user (the field or mutation checks its own object rules deeper).
    SignedIn,
    /// The user the object describes, and site admins.
    OwnUser,
    /// Anyone who holds any role in the owning event.
    Member,
    /// Members of the owning team, and the event's organizers.
    OwnTeam,
    /// Public objects for everyone; otherwise their own team and the organizers.
    VisibleOrOwnTeam,
    /// The judge the object belongs to (its scope's user), and the event's organizers.
    /// Participants and the public never read a judge's scores.
    OwnJudge,
    /// The person the object is about (its scope's user), and the event's organizers: a
    /// member reads their own membership's email, organizers everyone's.
    SelfOrOrganizer,
    /// The event's organizers (and site admins).
    Organizer,
    /// Site admins only.
    SiteAdmin,
}

/// What a field's object belongs to, for its guard.
#[derive(Clone, Copy, Debug, Default)]
pub struct Scope {
    pub event: Option<i64>,
    pub team: Option<i64>,
    pub user: Option<i64>,
    pub public: bool,
}

impl Scope {
    pub fn none() -> Scope {
        Scope::default()
    }
    pub fn event(event: i64) -> Scope {
        Scope {
            event: Some(event),
            ..Default::default()
        }
    }
}

/// The declared rules by `(type, field)`: the guard of every resolved field looks its rule
/// up here (hundreds of times for a page of projects), so the lookup is one FxHash of the
/// two names and no allocation. The tables are listed where the schema is assembled
/// (`graphql::registry`), which puts the one set of them in the schema's data; this file
/// names none of the files that declare them.
#[derive(Debug, Default)]
pub struct Rules(rustc_hash::FxHashMap<(&'static str, &'static str), Rule>);

impl Rules {
    /// The rules of `tables`, each a file's `POLICIES`.
    pub fn new(tables: &[&'static [(&'static str, Rule)]]) -> Rules {
        let mut rules = rustc_hash::FxHashMap::default();
        for (name, rule) in tables.iter().flat_map(|t| t.iter()) {
            if let Some((type_name, field)) = name.split_once('.') {
                rules.insert((type_name, field), *rule);
            }
        }
        Rules(rules)
    }

    /// The declared rule of `Type.field`, if any.
    pub fn get(&self, type_name: &str, field: &str) -> Option<Rule> {
        self.0.get(&(type_name, field)).copied()
    }
}

/// Evaluates `rule` for the current caller against `scope`.
pub async fn allowed(ctx: &Context<'_>, rule: Rule, scope: &Scope) -> Result<bool, AppError> {
    let rc = ctx.rc();
    let Some(user) = rc.user() else {
        return Ok(match rule {
            Rule::Public => true,
            Rule::VisibleOrOwnTeam => scope.public,
            _ => false,
        });
    };
    if matches!(rule, Rule::Public | Rule::SignedIn) || user.is_site_admin {
        return Ok(true);
    }
    if rule == Rule::OwnUser {
        return Ok(scope.user == Some(user.id));
    }
    if matches!(rule, Rule::OwnJudge | Rule::SelfOrOrganizer) && scope.user == Some(user.id) {
        return Ok(true);
    }
    if rule == Rule::SiteAdmin {
        return Ok(false);
    }
    if rule == Rule::VisibleOrOwnTeam && scope.public {
        return Ok(true);
    }
    let Some(event) = scope.event else {
        return Ok(false);
    };
    let access = rc.access(ctx.db()).await?;
    Ok(match rule {
        Rule::Member => access.is_member(event) || access.is_organizer(event),
        Rule::Organizer | Rule::OwnJudge | Rule::SelfOrOrganizer => access.is_organizer(event),
        Rule::OwnTeam | Rule::VisibleOrOwnTeam => {
            access.is_organizer(event) || scope.team.is_some_and(|t| access.on_team(event, t))
        }
        Rule::Public | Rule::SignedIn | Rule::OwnUser | Rule::SiteAdmin => false,
    })
}

/// The object-level guard every output type installs.
pub struct FieldGuard {
    type_name: &'static str,
    scope: Scope,
}

impl FieldGuard {
    pub fn new(type_name: &'static str, scope: Scope) -> Self {
        FieldGuard { type_name, scope }
    }
}

impl Guard for FieldGuard {
    async fn check(&self, ctx: &Context<'_>) -> async_graphql::Result<()> {
        let field = ctx.item.node.name.node.as_str();
        // A `read`-scoped API token never runs a mutation, over HTTP or websocket.
        if self.type_name == "Mutation"
            && ctx.rc().caller.as_ref().is_some_and(|(_, c)| c.read_only())
        {
            return Err(ctx.err(AppError::forbidden(
                "this API token is read-only: it cannot run mutations",
            )));
        }
        // A session started by a judge's standing sign-in only scores: never an account,
        // organizer or participant write (`domain::judge_sign_in`).
        if self.type_name == "Mutation"
            && ctx.rc().judge_link().is_some()
            && !crate::domain::judge_sign_in::ALLOWED_MUTATIONS.contains(&field)
        {
            return Err(ctx.err(AppError::forbidden(crate::domain::judge_sign_in::REFUSAL)));
        }
        // A schema built without its rules (see `graphql::schema`) refuses every field.
        let rule = ctx
            .data_opt::<&'static Rules>()
            .and_then(|rules| rules.get(self.type_name, field));
        let Some(rule) = rule else {
            return Err(ctx.err(AppError::Internal(format!(
                "no authorization policy is declared for {}.{field}",
                self.type_name
            ))));
        };
        match allowed(ctx, rule, &self.scope).await {
            Ok(true) => Ok(()),
            Ok(false) if ctx.rc().user().is_none() => Err(ctx.err(AppError::Unauthenticated)),
            Ok(false) => Err(ctx.err(AppError::forbidden(format!(
                "you may not read {}.{field}",
                self.type_name
            )))),
            Err(e) => Err(ctx.err(e)),
        }
    }
}
