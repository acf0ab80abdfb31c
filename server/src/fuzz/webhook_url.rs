//! Target 5b: the webhook SSRF gate ([`crate::webhooks::parse_url`], [`check_url`]). An
//! address is judged the same in every spelling: dotted, one number, octal, hex, two or
//! three parts, leading zeros, upper-case hex, a trailing dot, percent-encoded or
//! full-width characters, and IPv6 forms carrying it (mapped, compatible, NAT64, 6to4).
//! Whatever the spelling, loopback, private, link-local, shared, unspecified, multicast,
//! broadcast and reserved addresses are refused with BAD_USER_INPUT naming `url`; the
//! test's own list of what must be refused is taken from the standard library's address
//! classes and the IANA registry, not from the code under test.
//!
//! Spellings that the URL parser turns into an address are checked without resolving;
//! names (the corpus's `localhost` spellings) go through the resolver like any name.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use url::Host;

use super::support;
use crate::error::AppError;
use crate::webhooks::{check_url, parse_url, public_address};

/// Blocks every webhook must refuse (IANA special-purpose registry), beside the classes
/// the standard library names.
const REFUSED_V4: [(u32, u8); 9] = [
    (0x0000_0000, 8),  // this network
    (0x6440_0000, 10), // shared address space (CGNAT)
    (0xc000_0000, 24), // IETF protocol assignments
    (0xc058_6300, 24), // 6to4 relay anycast
    (0xc612_0000, 15), // benchmarking
    (0xf000_0000, 4),  // reserved
    (0x7f00_0000, 8),  // loopback
    (0xa9fe_0000, 16), // link-local, cloud metadata
    (0x0a00_0000, 8),  // private
];

/// Whether a webhook must never reach `ip`, by the test's own reckoning.
fn must_refuse_v4(ip: Ipv4Addr) -> bool {
    let n = u32::from(ip);
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || REFUSED_V4
            .iter()
            .any(|&(net, len)| n >> (32 - len) == net >> (32 - len))
}

/// An IPv4 address, half of them from the blocks that must be refused.
fn v4() -> impl Strategy<Value = u32> {
    let blocks: Vec<(u32, u8)> = REFUSED_V4
        .iter()
        .copied()
        .chain([
            (0xac10_0000, 12), // 172.16/12
            (0xc0a8_0000, 16), // 192.168/16
            (0xe000_0000, 4),  // multicast
            (0xffff_ffff, 32), // broadcast
            (0xc000_0200, 24), // documentation
        ])
        .collect();
    prop_oneof![
        any::<u32>(),
        (prop::sample::select(blocks), any::<u32>()).prop_map(|((net, len), host)| {
            let mask = if len == 32 { 0 } else { u32::MAX >> len };
            net | (host & mask)
        }),
        prop::sample::select(vec![
            0,
            1,
            0x7f00_0001,
            0xa9fe_a9fe,
            0x0808_0808,
            0x0101_0101
        ]),
    ]
}

/// How one part of a dotted IPv4 spelling is written.
#[derive(Debug, Clone, Copy)]
enum Radix {
    Decimal,
    /// `0` and octal digits, with extra leading zeros.
    Octal(u8),
    /// `0x` or `0X`, extra zeros, upper- or lower-case digits.
    Hex(u8, bool, bool),
}

fn radix() -> impl Strategy<Value = Radix> {
    prop_oneof![
        Just(Radix::Decimal),
        (0u8..3).prop_map(Radix::Octal),
        (0u8..3, any::<bool>(), any::<bool>()).prop_map(|(z, x, u)| Radix::Hex(z, x, u)),
    ]
}

fn part(n: u32, r: Radix) -> String {
    match r {
        Radix::Decimal => n.to_string(),
        Radix::Octal(z) => format!("{}0{n:o}", "0".repeat(usize::from(z))),
        Radix::Hex(z, big_x, upper) => {
            let digits = if upper {
                format!("{n:X}")
            } else {
                format!("{n:x}")
            };
            format!(
                "0{}{}{digits}",
                if big_x { 'X' } else { 'x' },
                "0".repeat(usize::from(z))
            )
        }
    }
}

/// The address as 1 to 4 dotted parts, the last part holding the remaining bytes.
fn dotted(n: u32, parts: usize, radices: &[Radix; 4]) -> String {
    let b = n.to_be_bytes();
    let mut out: Vec<String> = b[..parts - 1]
        .iter()
        .zip(radices)
        .map(|(&x, &r)| part(u32::from(x), r))
        .collect();
    let rest = b[parts - 1..]
        .iter()
        .fold(0u32, |acc, &x| (acc << 8) | u32::from(x));
    out.push(part(rest, radices[3]));
    out.join(".")
}

/// One spelling of an address and the host the parser must make of it.
#[derive(Debug, Clone)]
struct Spelling {
    n: u32,
    form: u8,
    parts: usize,
    radices: [Radix; 4],
    trailing_dot: bool,
    /// Percent-encode (1) or write full-width (2) some characters of the host.
    disguise: u8,
    pick: u64,
    upper: bool,
    tail: String,
}

fn spelling() -> impl Strategy<Value = Spelling> {
    (
        v4(),
        0u8..7,
        1usize..=4,
        [radix(), radix(), radix(), radix()],
        any::<bool>(),
        0u8..3,
        any::<u64>(),
        any::<bool>(),
        prop_oneof![Just(String::new()), "(:[0-9]{1,4})?(/[a-z0-9?#=&.%]{0,8})?"],
    )
        .prop_map(
            |(n, form, parts, radices, trailing_dot, disguise, pick, upper, tail)| Spelling {
                n,
                form,
                parts,
                radices,
                trailing_dot,
                disguise,
                pick,
                upper,
                tail,
            },
        )
}

impl Spelling {
    /// The host as written, and the address it means.
    fn host(&self) -> (String, IpAddr) {
        let ip = Ipv4Addr::from(self.n);
        let (hi, lo) = ((self.n >> 16) as u16, self.n as u16);
        let hex = |x: u16| {
            let s = format!("{:0w$x}", x, w = if self.upper { 4 } else { 1 });
            if self.upper { s.to_uppercase() } else { s }
        };
        let six = |text: String, carrier: Ipv6Addr| (format!("[{text}]"), IpAddr::V6(carrier));
        match self.form {
            1 => six(format!("::ffff:{ip}"), ip.to_ipv6_mapped()),
            2 => six(
                format!("::{}:{}:{}", hex(0xffff), hex(hi), hex(lo)),
                ip.to_ipv6_mapped(),
            ),
            3 => six(
                format!("0:0:{}:0:0:{}:{ip}", hex(0), hex(0xffff)),
                ip.to_ipv6_mapped(),
            ),
            4 if self.n > 1 => six(format!("::{ip}"), ip.to_ipv6_compatible()),
            5 => six(
                format!("{}:ff9b::{}:{}", hex(0x64), hex(hi), hex(lo)),
                Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, hi, lo),
            ),
            6 => six(
                format!("2002:{}:{}::{}", hex(hi), hex(lo), hex(self.pick as u16)),
                Ipv6Addr::new(0x2002, hi, lo, 0, 0, 0, 0, self.pick as u16),
            ),
            _ => {
                let mut h = dotted(self.n, self.parts, &self.radices);
                if self.trailing_dot {
                    h.push('.');
                }
                (self.disguised(&h), IpAddr::V4(ip))
            }
        }
    }

    /// `h` with some characters percent-encoded or written full-width (which the URL
    /// parser maps back before it reads the address).
    fn disguised(&self, h: &str) -> String {
        let mut bits = self.pick;
        h.chars()
            .map(|c| {
                bits = bits.rotate_right(1);
                if bits & 1 == 0 {
                    return c.to_string();
                }
                match self.disguise {
                    1 => format!("%{:02X}", c as u32),
                    2 => match c {
                        '.' => '\u{3002}'.to_string(),
                        c if c.is_ascii_alphanumeric() => char::from_u32(c as u32 - 0x21 + 0xFF01)
                            .map_or(c.to_string(), String::from),
                        c => c.to_string(),
                    },
                    _ => c.to_string(),
                }
            })
            .collect()
    }

    fn url(&self) -> (String, IpAddr) {
        let (host, ip) = self.host();
        let scheme = if self.upper { "HTTPS" } else { "http" };
        (format!("{scheme}://{host}{}", self.tail), ip)
    }
}

/// IPv6 blocks every webhook must refuse beside the classes the standard library names
/// (IANA special-purpose registry): (prefix, length).
const REFUSED_V6: [(u128, u8); 6] = [
    (0xfec0 << 112, 10),          // site-local (deprecated)
    (0x0100 << 112, 64),          // discard-only
    (0x2001_0db8 << 96, 32),      // documentation
    (0x3fff << 112, 20),          // documentation
    (0x2001 << 112, 23),          // IETF protocol assignments, Teredo
    (0x0064_ff9b_0001 << 80, 48), // NAT64 local use
];

/// Whether a webhook must never reach `ip`: a non-public IPv4 address however it is
/// carried, or an IPv6 address that is loopback, unspecified, unique or link local,
/// multicast, or in one of [`REFUSED_V6`].
fn must_refuse(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => must_refuse_v4(v4),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            let n = u128::from(v6);
            let carried = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
            if let Some(mapped) = v6.to_ipv4_mapped() {
                return must_refuse_v4(mapped);
            }
            if s[..6] == [0; 6] || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                return must_refuse_v4(carried) || v6.is_loopback() || v6.is_unspecified();
            }
            if s[0] == 0x2002 {
                return must_refuse_v4(Ipv4Addr::from((u32::from(s[1]) << 16) | u32::from(s[2])));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_unique_local()
                || v6.is_unicast_link_local()
                || v6.is_multicast()
                || REFUSED_V6
                    .iter()
                    .any(|&(net, len)| n >> (128 - u32::from(len)) == net >> (128 - u32::from(len)))
        }
    }
}

/// The IPv4 address an IPv6 form carries (mapped, compatible, NAT64, 6to4).
fn ip4_carried(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let join = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if s[0] == 0x2002 {
        Some(join(s[1], s[2]))
    } else if s[..5] == [0; 5] && (s[5] == 0 || s[5] == 0xffff)
        || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
    {
        Some(join(s[6], s[7]))
    } else {
        None
    }
}

fn refused_naming_url(r: &Result<impl std::fmt::Debug, AppError>) -> bool {
    matches!(r, Err(AppError::BadInput { field, .. }) if field == "url")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// One spelling: the parser reads the address it means (or refuses the URL), and the gate
/// decides as it does for the address itself, refusing what must be refused.
fn check_spelling(rt: &tokio::runtime::Runtime, s: &Spelling) -> Result<(), TestCaseError> {
    let (url, ip) = s.url();
    let parsed = match parse_url(&url) {
        Ok(u) => u,
        Err(e) => {
            prop_assert!(refused_naming_url(&Err::<(), _>(e)), "{}", url);
            // Only disguised spellings may fail to parse; a plain one is a URL.
            prop_assert!(s.disguise != 0, "{} did not parse", url);
            return Ok(());
        }
    };
    let host = match ip {
        IpAddr::V4(v4) => Host::Ipv4(v4),
        IpAddr::V6(v6) => Host::Ipv6(v6),
    };
    prop_assert_eq!(parsed.host(), Some(host), "{} is read as another host", url);
    for allow_loopback in [false, true] {
        let verdict = rt.block_on(check_url(&url, allow_loopback));
        prop_assert_eq!(
            verdict.is_ok(),
            public_address(ip, allow_loopback),
            "{} is judged unlike {} (allow_loopback {})",
            url,
            ip,
            allow_loopback
        );
        // The test-only flag lets loopback through, also carried in an IPv6 form.
        let loopback = match ip {
            IpAddr::V4(v4) => v4.is_loopback(),
            IpAddr::V6(v6) => v6.is_loopback() || ip4_carried(v6).is_some_and(|c| c.is_loopback()),
        };
        if must_refuse(ip) && !(allow_loopback && loopback) {
            prop_assert!(
                refused_naming_url(&verdict),
                "{} (meaning {}) was not refused: {:?}",
                url,
                ip,
                verdict.map(|c| c.url.to_string())
            );
        }
    }
    Ok(())
}

/// Non-public IPv6 addresses, written in their many spellings.
fn v6_refused() -> impl Strategy<Value = (Ipv6Addr, bool, bool)> {
    let blocks: Vec<(u128, u8)> = REFUSED_V6
        .iter()
        .copied()
        .chain([
            (0, 128),            // ::
            (1, 128),            // ::1
            (0xfc00 << 112, 7),  // unique local
            (0xfe80 << 112, 10), // link-local
            (0xff00 << 112, 8),  // multicast
            (0xffff << 32, 96),  // mapped, carrying any IPv4 address
        ])
        .collect();
    (
        prop::sample::select(blocks),
        any::<u128>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|((net, len), host, upper, full)| {
            let mask = if len == 128 { 0 } else { u128::MAX >> len };
            (Ipv6Addr::from(net | (host & mask)), upper, full)
        })
}

fn spell_v6(ip: Ipv6Addr, upper: bool, full: bool) -> String {
    let text = if full {
        ip.segments()
            .iter()
            .map(|s| format!("{s:04x}"))
            .collect::<Vec<_>>()
            .join(":")
    } else {
        ip.to_string()
    };
    if upper { text.to_uppercase() } else { text }
}

#[test]
fn fuzz_webhook_url_seed_corpus() {
    let rt = runtime();
    for (name, url) in support::corpus_strings("webhook_url") {
        for allow_loopback in [false, true] {
            let verdict = rt.block_on(check_url(&url, allow_loopback));
            assert!(
                refused_naming_url(&verdict) || allow_loopback && name.starts_with("loopback"),
                "corpus webhook_url/{name} {url:?} (allow_loopback {allow_loopback}) was not \
                 refused: {verdict:?}"
            );
        }
    }
}

#[test]
fn fuzz_webhook_url_every_ipv4_spelling_is_judged_as_its_address() {
    let rt = runtime();
    support::run("webhook_url_v4", 2_048, &spelling(), |s| {
        check_spelling(&rt, &s)
    });
}

#[test]
fn fuzz_webhook_url_refuses_non_public_ipv6_in_any_spelling() {
    let rt = runtime();
    support::run("webhook_url_v6", 512, &v6_refused(), |(ip, upper, full)| {
        let url = format!("http://[{}]:8080/hook", spell_v6(ip, upper, full));
        let parsed = parse_url(&url).map_err(|e| TestCaseError::fail(format!("{url}: {e}")))?;
        prop_assert_eq!(parsed.host(), Some(Host::Ipv6(ip)));
        let verdict = rt.block_on(check_url(&url, false));
        if must_refuse(IpAddr::V6(ip)) {
            prop_assert!(refused_naming_url(&verdict), "{} was not refused", url);
        } else {
            // Only a mapped public IPv4 address is generated outside the refused blocks.
            prop_assert!(ip.to_ipv4_mapped().is_some(), "{}", url);
            prop_assert!(verdict.is_ok(), "{} was refused: {:?}", url, verdict.err());
        }
        Ok(())
    });
}

/// What registration stores (the parsed URL) parses again to itself at every attempt.
#[test]
fn fuzz_webhook_url_parse_is_idempotent() {
    support::run(
        "webhook_url_parse",
        1_024,
        &super::validate::text(),
        |raw| {
            match parse_url(&raw) {
                Ok(u) => {
                    let again = parse_url(u.as_str()).map_err(|e| {
                        TestCaseError::fail(format!("{u} is refused when stored: {e}"))
                    })?;
                    prop_assert_eq!(again.as_str(), u.as_str());
                    prop_assert!(matches!(u.scheme(), "http" | "https"));
                    prop_assert!(u.username().is_empty() && u.password().is_none());
                }
                Err(e) => prop_assert!(refused_naming_url(&Err::<(), _>(e))),
            }
            Ok(())
        },
    );
}

/// The fuzz's own reckoning agrees with the addresses the unit tests name.
#[test]
fn fuzz_webhook_url_oracle_knows_the_named_addresses() {
    for refused in [
        "127.0.0.1",
        "10.1.2.3",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.1.2.3",
        "224.0.0.1",
        "255.255.255.255",
        "240.0.0.1",
    ] {
        assert!(must_refuse(refused.parse().unwrap()), "{refused}");
    }
    for public in [
        "1.1.1.1",
        "8.8.8.8",
        "172.32.0.1",
        "100.128.0.1",
        "192.169.0.1",
    ] {
        assert!(!must_refuse(public.parse().unwrap()), "{public}");
    }
}
