//! Webhooks: where a receiver may be ([`public_address`], [`check_url`]), how a delivery is
//! signed ([`signature`]), and the worker that sends the deliveries the audit append wrote
//! ([`run`]).
//!
//! The SSRF gate: a receiver's URL is http or https, carries no credentials, and every
//! address its host resolves to is public. It is checked when an organizer registers it
//! and again at every attempt: the worker's client resolves through [`GuardedResolver`],
//! which refuses the whole name if any address is not public and hands the connector only
//! the addresses it checked, so the connection goes to a checked address. Redirects are
//! not followed, no proxy from the environment is used, and an attempt times out after
//! [`TIMEOUT`].
//!
//! The worker wakes after commits (and every few seconds, for retries and for deliveries
//! other processes wrote), claims due deliveries with a lease in one short transaction
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite's write transaction is exclusive), so
//! several processes never send one delivery at once, sends each, and records the attempt:
//! delivered on a 2xx answer, otherwise retried after an exponential backoff (30 s,
//! doubling) until the [`MAX_ATTEMPTS`]th failure, which is final.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use entity::webhook_delivery::{self, DeliveryStatus};
use entity::{webhook, webhook_attempt};
use hmac::{Hmac, KeyInit, Mac};
use sea_orm::sea_query::{Expr, ExprTrait, LockBehavior, LockType};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, DbBackend, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use sha2::Sha256;
use tokio::sync::Notify;
use url::{Host, Url};

use crate::db::Db;
use crate::error::{AppError, AppResult};

/// Attempts at a delivery before it is marked `failed`.
pub const MAX_ATTEMPTS: i32 = 8;
/// How long one attempt may take, connecting included.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// How long a claimed delivery is left to its worker before another may take it: well
/// beyond one attempt's [`TIMEOUT`].
const LEASE_SECS: i64 = 60;
/// How often the worker looks for due deliveries without being woken.
const POLL: Duration = Duration::from_secs(5);
/// Deliveries claimed per round.
const BATCH: u64 = 20;
/// The most of a receiver's error text kept on an attempt.
const ERROR_CHARS: usize = 300;

/// The webhook settings of `verdict serve`, shared by the registration check and the
/// worker: defined with the configuration, so that `config.rs` needs nothing above it.
pub use crate::config::WebhookSettings as Settings;

impl Settings {
    /// The wait after the `failures`th failed attempt: the base (30 s), doubling.
    pub fn backoff(&self, failures: i32) -> chrono::Duration {
        let factor = 1u32 << failures.clamp(1, 16).saturating_sub(1);
        chrono::Duration::from_std(self.backoff_base.saturating_mul(factor))
            .unwrap_or(chrono::Duration::hours(24))
    }
}

/// Wakes the webhook worker after a commit (which may have written deliveries).
#[derive(Clone, Default)]
pub struct Wake(Arc<Notify>);

impl Wake {
    pub fn wake(&self) {
        self.0.notify_one();
    }
}

/// Whether a webhook may connect to `ip`: a public unicast address. Refused: IPv4
/// 0.0.0.0/8, 10/8, 100.64/10 (CGNAT), 127/8, 169.254/16 (link-local, cloud metadata),
/// 172.16/12, 192.0.0/24, the documentation ranges, 192.88.99/24, 192.168/16,
/// 198.18/15, multicast, 240/4 and broadcast; IPv6 outside 2000::/3 (unspecified,
/// loopback, ULA fc00::/7, link-local fe80::/10, site-local, multicast, discard), the
/// IETF block 2001::/23 (Teredo included), documentation (2001:db8::/32, 3fff::/20) and
/// NAT64 local use; the IPv4-mapped, IPv4-compatible, NAT64 (64:ff9b::/96) and 6to4
/// (2002::/16) forms are judged by the IPv4 address they carry. With `allow_loopback`
/// (tests only) loopback addresses pass.
pub fn public_address(ip: IpAddr, allow_loopback: bool) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4, allow_loopback),
        IpAddr::V6(v6) => public_v6(v6, allow_loopback),
    }
}

fn public_v4(ip: Ipv4Addr, allow_loopback: bool) -> bool {
    let [a, b, c, _] = ip.octets();
    if a == 127 {
        return allow_loopback;
    }
    let refused = a == 0
        || a == 10
        || (a == 100 && (64..128).contains(&b))
        || (a == 169 && b == 254)
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 192 && b == 0 && c == 2)
        || (a == 192 && b == 88 && c == 99)
        || (a == 192 && b == 168)
        || (a == 198 && (18..20).contains(&b))
        || (a == 198 && b == 51 && c == 100)
        || (a == 203 && b == 0 && c == 113)
        || a >= 224;
    !refused
}

fn public_v6(ip: Ipv6Addr, allow_loopback: bool) -> bool {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if ip == Ipv6Addr::LOCALHOST {
        return allow_loopback;
    }
    // ::a.b.c.d (compatible; also :: itself) and ::ffff:a.b.c.d (mapped).
    if s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff) {
        return public_v4(embedded(s[6], s[7]), allow_loopback);
    }
    // NAT64, well-known prefix 64:ff9b::/96.
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return public_v4(embedded(s[6], s[7]), allow_loopback);
    }
    // 6to4: 2002:AABB:CCDD::/48 carries a.b.c.d.
    if s[0] == 0x2002 {
        return public_v4(embedded(s[1], s[2]), allow_loopback);
    }
    let global_unicast = s[0] & 0xe000 == 0x2000;
    let ietf = s[0] == 0x2001 && s[1] < 0x200;
    let documentation = (s[0] == 0x2001 && s[1] == 0xdb8) || (s[0] == 0x3fff && s[1] < 0x1000);
    global_unicast && !ietf && !documentation
}

/// A receiver URL that passed [`check_url`], with the addresses its host resolved to.
#[derive(Debug, Clone)]
pub struct CheckedUrl {
    pub url: Url,
    pub addrs: Vec<SocketAddr>,
}

/// The checks that need no resolution: http or https, no credentials, a host. An IP
/// literal in any spelling (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`, `[::ffff:…]`)
/// is normalized by the URL parser to the address it means. BAD_USER_INPUT naming `url`.
pub fn parse_url(raw: &str) -> AppResult<Url> {
    let bad = |m: &str| AppError::bad_input("url", m.to_owned());
    if raw.len() > 2000 {
        return Err(bad("is longer than 2,000 characters"));
    }
    let url = Url::parse(raw.trim()).map_err(|e| bad(&format!("is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("must be an http or https URL"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("must not carry credentials"));
    }
    // What is stored and parsed again at every attempt is the parser's percent-encoded
    // form, which may be several times longer than what was sent.
    if url.as_str().len() > 2000 {
        return Err(bad("is longer than 2,000 characters once percent-encoded"));
    }
    match url.host() {
        None => Err(bad("has no host")),
        Some(Host::Domain("")) => Err(bad("has no host")),
        Some(_) => Ok(url),
    }
}

/// The addresses `url`'s host means, every one checked with [`public_address`]: an IP
/// literal as it is, a name resolved (a name that does not resolve is refused).
pub async fn resolve_checked(url: &Url, allow_loopback: bool) -> AppResult<Vec<SocketAddr>> {
    let bad = |m: String| AppError::bad_input("url", m);
    let port = url
        .port_or_known_default()
        .ok_or_else(|| bad("has no port".into()))?;
    let addrs: Vec<SocketAddr> = match url.host() {
        Some(Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
        Some(Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
        Some(Host::Domain(name)) => resolve(name, port, allow_loopback)
            .await
            .map_err(|e| bad(e.to_string()))?,
        None => return Err(bad("has no host".into())),
    };
    if addrs
        .iter()
        .any(|a| !public_address(a.ip(), allow_loopback))
    {
        return Err(bad(NOT_PUBLIC.into()));
    }
    Ok(addrs)
}

/// The one refusal of a receiver's host, at registration and at every attempt. It never
/// says what a name resolved to, nor whether it resolved at all: either would let an
/// organizer map the server's internal network (which names exist, and their addresses)
/// one registration at a time.
pub const NOT_PUBLIC: &str = "must reach a public address (a name must resolve, and only to \
     public addresses)";

/// Resolves `name`; [`NOT_PUBLIC`] unless it has addresses and every one is public. What
/// the resolver said is logged for the operator, never returned.
async fn resolve(name: &str, port: u16, allow_loopback: bool) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = match tokio::net::lookup_host((name, port)).await {
        Ok(addrs) => addrs.collect(),
        Err(e) => {
            tracing::info!(%name, error = %e, "a webhook host does not resolve");
            vec![]
        }
    };
    if let Some(a) = addrs
        .iter()
        .find(|a| !public_address(a.ip(), allow_loopback))
    {
        tracing::info!(%name, address = %a.ip(), "a webhook host resolves to a private address");
        return Err(NOT_PUBLIC.into());
    }
    if addrs.is_empty() {
        return Err(NOT_PUBLIC.into());
    }
    Ok(addrs)
}

/// [`parse_url`] then [`resolve_checked`]: the registration gate.
pub async fn check_url(raw: &str, allow_loopback: bool) -> AppResult<CheckedUrl> {
    let url = parse_url(raw)?;
    let addrs = resolve_checked(&url, allow_loopback).await?;
    Ok(CheckedUrl { url, addrs })
}

/// The resolver of the worker's client: the name's addresses, only when every one is
/// public, so the connector connects to an address that was checked.
struct GuardedResolver {
    allow_loopback: bool,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_loopback = self.allow_loopback;
        let name = name.as_str().to_owned();
        Box::pin(async move {
            let addrs = resolve(&name, 0, allow_loopback).await?;
            Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The client every attempt uses: the guarded resolver, no redirects, no proxy, a
/// [`TIMEOUT`].
pub fn client(settings: &Settings) -> AppResult<reqwest::Client> {
    reqwest::Client::builder()
        .dns_resolver(Arc::new(GuardedResolver {
            allow_loopback: settings.allow_loopback,
        }))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(TIMEOUT)
        .connect_timeout(TIMEOUT)
        .user_agent("Verdict-Webhooks/1")
        .build()
        .map_err(|e| AppError::Internal(format!("webhook client: {e}")))
}

/// `sha256=` and the hex HMAC-SHA256, keyed by the webhook's secret (its UTF-8 bytes),
/// over `{delivery id}.{timestamp}.{body}`: the `X-Verdict-Signature` header.
pub fn signature(secret: &str, delivery: &str, timestamp: i64, body: &str) -> String {
    // HMAC takes a key of any length.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
    mac.update(format!("{delivery}.{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Runs the worker until the process ends (waiting while the database does not answer).
pub async fn run(db: Db, settings: Settings, wake: Wake) {
    let client = match client(&settings) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "webhook worker cannot start");
            return;
        }
    };
    // Tests shorten the backoff: look again at least that often.
    let poll = POLL.min(settings.backoff_base.max(Duration::from_millis(20)));
    loop {
        // While the database does not answer there is nothing to claim: wait for it.
        db.availability().up().await;
        if let Err(e) = deliver_due(&db, &client, &settings).await {
            tracing::warn!(error = %e, "webhook worker: a round failed; retrying");
        }
        let _ = tokio::time::timeout(poll, wake.0.notified()).await;
    }
}

/// Claims up to [`BATCH`] due deliveries for this worker: in one transaction, the due rows
/// not leased by another worker (locked, skipping rows another transaction holds, on
/// PostgreSQL) get a lease and their attempt counted; the commit happens before anything
/// is sent.
async fn claim(db: &Db) -> AppResult<Vec<webhook_delivery::Model>> {
    let txn = db.write().await?;
    let now = crate::db::now(&txn).await?;
    let mut due = webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending))
        .filter(webhook_delivery::Column::NextAttemptAt.lte(now))
        .filter(
            Condition::any()
                .add(webhook_delivery::Column::LeaseUntil.is_null())
                .add(webhook_delivery::Column::LeaseUntil.lte(now)),
        )
        .order_by_asc(webhook_delivery::Column::Id)
        .limit(BATCH);
    if db.backend() == DbBackend::Postgres {
        due = due.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked);
    }
    let mut rows = due.all(&txn).await?;
    if rows.is_empty() {
        txn.commit().await?;
        return Ok(rows);
    }
    webhook_delivery::Entity::update_many()
        .col_expr(
            webhook_delivery::Column::LeaseUntil,
            Expr::value(Some(now + chrono::Duration::seconds(LEASE_SECS))),
        )
        .col_expr(
            webhook_delivery::Column::Attempts,
            Expr::col(webhook_delivery::Column::Attempts).add(1),
        )
        .filter(webhook_delivery::Column::Id.is_in(rows.iter().map(|r| r.id)))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    for r in &mut rows {
        r.attempts += 1;
    }
    Ok(rows)
}

/// What one attempt came to.
struct Outcome {
    started: DateTime<Utc>,
    elapsed: Duration,
    status: Option<u16>,
    error: Option<String>,
    /// Not worth another attempt: the webhook was switched off.
    give_up: bool,
}

impl Outcome {
    fn delivered(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// Sends `d` once to its webhook.
async fn attempt(
    client: &reqwest::Client,
    settings: &Settings,
    hook: Option<&webhook::Model>,
    d: &webhook_delivery::Model,
) -> Outcome {
    let started = Utc::now();
    let clock = Instant::now();
    let done = |status: Option<u16>, error: Option<String>| Outcome {
        started,
        elapsed: clock.elapsed(),
        status,
        error,
        give_up: false,
    };
    let Some(hook) = hook.filter(|h| h.active) else {
        return Outcome {
            give_up: true,
            ..done(None, Some("the webhook is inactive".into()))
        };
    };
    // Checked again now: an IP literal here, a name by the client's guarded resolver.
    let url = match parse_url(&hook.url) {
        Ok(u) => u,
        Err(e) => return done(None, Some(e.to_string())),
    };
    if let Some(ip) = match url.host() {
        Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        _ => None,
    } && !public_address(ip, settings.allow_loopback)
    {
        return done(None, Some(NOT_PUBLIC.into()));
    }
    let timestamp = started.timestamp();
    let r = client
        .post(url)
        .header("Content-Type", "application/json")
        .header("X-Verdict-Delivery", &d.public_id)
        .header("X-Verdict-Timestamp", timestamp.to_string())
        .header(
            "X-Verdict-Signature",
            signature(&hook.secret, &d.public_id, timestamp, &d.body),
        )
        .body(d.body.clone())
        .send()
        .await;
    match r {
        Ok(resp) => {
            let status = resp.status();
            let error = (!status.is_success()).then(|| format!("HTTP {status}"));
            done(Some(status.as_u16()), error)
        }
        Err(e) => {
            // The whole chain of causes: "error sending request" alone says nothing.
            let mut text = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                text.push_str(": ");
                text.push_str(&s.to_string());
                source = s.source();
            }
            done(None, Some(text))
        }
    }
}

/// Sends every due delivery once; returns how many were delivered.
pub async fn deliver_due(
    db: &Db,
    client: &reqwest::Client,
    settings: &Settings,
) -> AppResult<usize> {
    let mut delivered = 0;
    loop {
        let claimed = claim(db).await?;
        if claimed.is_empty() {
            return Ok(delivered);
        }
        let hooks = webhook::Entity::find()
            .filter(webhook::Column::Id.is_in(claimed.iter().map(|d| d.webhook_id)))
            .all(&db.conn)
            .await?;
        for d in claimed {
            let hook = hooks.iter().find(|h| h.id == d.webhook_id);
            let outcome = attempt(client, settings, hook, &d).await;
            if outcome.delivered() {
                delivered += 1;
            } else {
                tracing::info!(delivery = %d.public_id, attempts = d.attempts,
                    error = outcome.error.as_deref().unwrap_or(""), "webhook not delivered");
            }
            record(db, settings, &d, &outcome).await?;
        }
    }
}

/// Records an attempt at `d` (its `attempts` already counts it) and its consequence, in
/// one transaction.
async fn record(
    db: &Db,
    settings: &Settings,
    d: &webhook_delivery::Model,
    o: &Outcome,
) -> AppResult<()> {
    let error: Option<String> = o
        .error
        .as_ref()
        .map(|e| e.chars().take(ERROR_CHARS).collect());
    let status = o.status.map(i32::from);
    let txn = db.write().await?;
    let now = crate::db::now(&txn).await?;
    webhook_attempt::Entity::insert(webhook_attempt::ActiveModel {
        delivery_id: Set(d.id),
        attempt: Set(d.attempts),
        started_at: Set(o.started),
        duration_ms: Set(i64::try_from(o.elapsed.as_millis()).unwrap_or(i64::MAX)),
        status_code: Set(status),
        error: Set(error.clone()),
        ..Default::default()
    })
    .exec_without_returning(&txn)
    .await?;
    let mut update = webhook_delivery::Entity::update_many()
        .col_expr(
            webhook_delivery::Column::LeaseUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(webhook_delivery::Column::LastStatus, Expr::value(status))
        .col_expr(webhook_delivery::Column::LastError, Expr::value(error))
        .filter(webhook_delivery::Column::Id.eq(d.id));
    update = if o.delivered() {
        update
            .col_expr(
                webhook_delivery::Column::Status,
                Expr::value(DeliveryStatus::Delivered),
            )
            .col_expr(
                webhook_delivery::Column::DeliveredAt,
                Expr::value(Some(now)),
            )
    } else if d.attempts >= MAX_ATTEMPTS || o.give_up {
        update.col_expr(
            webhook_delivery::Column::Status,
            Expr::value(DeliveryStatus::Failed),
        )
    } else {
        update.col_expr(
            webhook_delivery::Column::NextAttemptAt,
            Expr::value(now + settings.backoff(d.attempts)),
        )
    };
    update.exec(&txn).await?;
    txn.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_public_addresses_pass() {
        for refused in [
            "127.0.0.1",
            "127.255.0.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.0.8",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "192.88.99.1",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "2001::1",
            "2001:db8::1",
            "3fff::1",
            "100::1",
        ] {
            assert!(
                !public_address(ip(refused), false),
                "{refused} must be refused"
            );
        }
        for public in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert!(public_address(ip(public), false), "{public} is public");
        }
    }

    #[test]
    fn the_test_flag_allows_loopback_and_nothing_else() {
        for allowed in ["127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"] {
            assert!(public_address(ip(allowed), true), "{allowed}");
        }
        for refused in ["10.0.0.1", "169.254.169.254", "0.0.0.0", "::", "fe80::1"] {
            assert!(!public_address(ip(refused), true), "{refused}");
        }
    }

    /// The URL parser turns every spelling of an IPv4 address into the address itself, so
    /// the address check sees what a connection would reach.
    #[test]
    fn ip_spellings_are_normalized_by_the_url_parser() {
        for spelling in [
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.0.0.1/",
            "http://0x7f000001/",
            "http://127.1/",
            "http://127.0.1/",
            "http://017700000001/",
            "HTTP://127.0.0.1./",
        ] {
            let url = parse_url(spelling).unwrap_or_else(|e| panic!("{spelling}: {e}"));
            assert_eq!(
                url.host(),
                Some(Host::Ipv4(Ipv4Addr::LOCALHOST)),
                "{spelling}"
            );
        }
        let url = parse_url("http://[::ffff:127.0.0.1]:8080/x").unwrap();
        assert_eq!(
            url.host(),
            Some(Host::Ipv6("::ffff:7f00:1".parse().unwrap()))
        );
    }

    #[test]
    fn urls_must_be_http_without_credentials() {
        for bad in [
            "ftp://example.org/",
            "file:///etc/passwd",
            "gopher://example.org/",
            "example.org/hook",
            "http://user:pass@example.org/",
            "https://user@example.org/",
            "http://",
            "https://:443/",
            "",
        ] {
            assert!(
                matches!(parse_url(bad), Err(AppError::BadInput { ref field, .. }) if field == "url"),
                "{bad} must be refused"
            );
        }
        assert!(parse_url("https://hooks.example.org/verdict?x=1").is_ok());
    }

    #[tokio::test]
    async fn literal_addresses_are_checked_without_resolving() {
        for refused in [
            "http://2130706433/",
            "http://127.1:9/",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00::1]/",
            "http://0.0.0.0/",
        ] {
            assert!(
                matches!(check_url(refused, false).await, Err(AppError::BadInput { ref field, .. }) if field == "url"),
                "{refused} must be refused"
            );
        }
        let ok = check_url("https://93.184.215.14/hook", false)
            .await
            .unwrap();
        assert_eq!(ok.addrs, vec!["93.184.215.14:443".parse().unwrap()]);
        assert!(check_url("http://127.0.0.1:9/", true).await.is_ok());
    }

    #[test]
    fn the_signature_is_hmac_sha256_over_id_timestamp_and_body() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let direct = {
            let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").unwrap();
            mac.update(b"what do ya want for nothing?");
            hex::encode(mac.finalize().into_bytes())
        };
        assert_eq!(
            direct,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(b"whsec_k").unwrap();
        mac.update(b"whd.x.1700000000.{\"a\":1}");
        assert_eq!(
            signature("whsec_k", "whd.x", 1_700_000_000, "{\"a\":1}"),
            format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
        );
    }

    #[test]
    fn backoff_doubles_from_the_base() {
        let s = Settings::default();
        let secs: Vec<i64> = (1..=7).map(|n| s.backoff(n).num_seconds()).collect();
        assert_eq!(secs, [30, 60, 120, 240, 480, 960, 1920]);
    }
}
