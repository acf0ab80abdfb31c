//! The client's address, which the per-address limits (request rate, log-in throttle) key
//! on. It is the socket's peer, unless that peer is one of the `--trusted-proxies`: then
//! `X-Forwarded-For` is read from the right, skipping trusted hops, and the first hop that
//! is not trusted is the client. A client cannot choose its address by sending the header
//! itself: hops left of an untrusted one are never believed.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, Request};
use ipnet::IpNet;
use tower_governor::GovernorError;
use tower_governor::key_extractor::KeyExtractor;

/// The client address of a request from `peer` with `headers`.
pub fn client_ip(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    if !is_trusted(&peer) {
        return peer;
    }
    let hops: Vec<IpAddr> = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|hop| hop.trim().parse::<IpAddr>())
        .collect::<Result<_, _>>()
        // A malformed header is not believed at all.
        .unwrap_or_default();
    hops.into_iter()
        .rev()
        .find(|hop| !is_trusted(hop))
        .unwrap_or(peer)
}

/// The rate limiter's key: the client address, as above.
#[derive(Clone)]
pub struct ClientIp {
    pub trusted: Arc<Vec<IpNet>>,
}

impl KeyExtractor for ClientIp {
    type Key = IpAddr;

    fn extract<T>(&self, req: &Request<T>) -> Result<IpAddr, GovernorError> {
        let peer = req
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
            .ok_or(GovernorError::UnableToExtractKey)?;
        Ok(client_ip(peer, req.headers(), &self.trusted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_proxy;

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", xff.parse().expect("header value"));
        h
    }

    #[test]
    fn only_trusted_peers_are_believed_and_the_rightmost_untrusted_hop_wins() {
        let proxy: IpAddr = "10.0.0.5".parse().unwrap();
        let trusted = [parse_proxy("10.0.0.0/8").unwrap()];
        // From an untrusted peer the header is ignored, whatever it says.
        let peer: IpAddr = "203.0.113.9".parse().unwrap();
        assert_eq!(client_ip(peer, &headers("198.51.100.1"), &trusted), peer);
        // Through the proxy: the client is the hop the proxy saw.
        assert_eq!(
            client_ip(proxy, &headers("198.51.100.1"), &trusted),
            "198.51.100.1".parse::<IpAddr>().unwrap()
        );
        // A client that prepends its own hops cannot pick its address.
        assert_eq!(
            client_ip(proxy, &headers("1.2.3.4, 198.51.100.1, 10.0.0.7"), &trusted),
            "198.51.100.1".parse::<IpAddr>().unwrap()
        );
        // No header, or a malformed one: the proxy itself.
        assert_eq!(client_ip(proxy, &HeaderMap::new(), &trusted), proxy);
        assert_eq!(client_ip(proxy, &headers("nonsense"), &trusted), proxy);
        assert_eq!(
            parse_proxy("127.0.0.1").unwrap(),
            "127.0.0.1/32".parse::<IpNet>().unwrap()
        );
        assert!(parse_proxy("not-an-ip").is_err());
    }
}
