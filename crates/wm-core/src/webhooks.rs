//! Webhook rules: the management schemas, target URL checks, the retry schedule and the
//! pause threshold.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use wm_types::webhooks::{CreateWebhook, UpdateWebhook};

use crate::validate::validated;

/// Most webhooks per organisation.
pub const MAX_WEBHOOKS: u64 = 10;
/// Consecutive exhausted deliveries that pause a webhook.
pub const PAUSE_AFTER: u32 = 10;
/// How long a receiver has to answer.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// How much of a response body is kept.
pub const RESPONSE_KEEP: usize = 1024;
/// How long deliveries are kept.
pub const RETENTION: Duration = Duration::from_secs(7 * 86_400);
/// The default retry delays after the first attempt.
pub const DEFAULT_SCHEDULE: [Duration; 5] = [
    Duration::from_secs(60),
    Duration::from_secs(300),
    Duration::from_secs(1800),
    Duration::from_secs(7200),
    Duration::from_secs(43_200),
];

validated!(CreateWebhook, UpdateWebhook);

/// The delay before the attempt after `attempts_made` failed ones, or `None` when the
/// retries are exhausted (1 attempt + one per schedule entry).
pub fn next_delay(schedule: &[Duration], attempts_made: u32) -> Option<Duration> {
    schedule
        .get((attempts_made as usize).checked_sub(1)?)
        .copied()
}

/// Whether an address is one a webhook may not reach: loopback, private, link-local,
/// unspecified, CGNAT, multicast, broadcast, documentation, site-local and unique-local
/// ranges. An IPv6 address that carries an IPv4 address (IPv4-mapped, IPv4-compatible,
/// NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`) is judged by that IPv4
/// address; Teredo (`2001::/32`), whose embedded address is obfuscated, is refused.
pub fn is_forbidden_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Some(v4) => forbidden_v4(v4),
            None => forbidden_v6(v6),
        },
    }
}

/// The IPv4 address an IPv6 address carries, by the transition scheme its prefix names.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let last32 = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    // IPv4-compatible `::a.b.c.d` (deprecated, still routed by some stacks); `::` and `::1`
    // are left to the IPv6 rules.
    if s[..6] == [0; 6] && !ip.is_unspecified() && !ip.is_loopback() {
        return Some(last32());
    }
    // NAT64 well-known prefix and local-use prefix (RFC 6052, RFC 8215).
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) {
        return Some(last32());
    }
    // 6to4: `2002:AABB:CCDD::/48` carries AA.BB.CC.DD.
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
}

// The ranges std classifies on stable Rust are asked of std; the rest are written here: std's
// `is_global`, `is_shared`, `is_benchmarking` and `is_reserved` are unstable, and the crates
// that classify by the IANA registry count NAT64 and 6to4 as global, which the
// embedded-address rule above must not.
fn forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240
}

fn forbidden_v6(ip: Ipv6Addr) -> bool {
    let [first, second, ..] = ip.segments();
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_unique_local()
        || ip.is_unicast_link_local()
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated, still private)
        || (first == 0x2001 && second == 0x0db8) // documentation
        || (first == 0x2001 && second == 0) // Teredo
}

/// The address an IP-literal host names, read as the HTTP client reads it: besides the usual
/// forms, the WHATWG URL parser takes the legacy IPv4 spellings (`127.1`, `2130706433`,
/// `0x7f.0.0.1`) as addresses, which are then connected to without any name resolution.
fn host_ip(host: &str) -> Option<IpAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(ip);
    }
    match url::Host::parse(host) {
        Ok(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Ok(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
        _ => None,
    }
}

/// A target URL split into what the checks need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `https` or `http`.
    pub scheme: String,
    /// Host name or IP literal (without brackets).
    pub host: String,
    /// Port (default of the scheme when absent).
    pub port: u16,
}

/// Parses a webhook URL and checks its form: https (http only when insecure targets are
/// allowed), a host, no credentials; an IP-literal host must not be a forbidden address
/// (unless allowed). Names are resolved and checked by the server, at creation and again
/// when connecting.
pub fn check_url(url: &str, allow_insecure: bool) -> Result<Target, String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or("url must be an absolute http(s) URL")?;
    let scheme = scheme.to_ascii_lowercase();
    match scheme.as_str() {
        "https" => {}
        "http" if allow_insecure => {}
        "http" => return Err("url must use https".into()),
        _ => return Err("url must be an absolute http(s) URL".into()),
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return Err("url must not contain credentials".into());
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or("url has a malformed host")?;
        (h.to_owned(), after.strip_prefix(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_owned(), Some(p)),
            None => (authority.to_owned(), None),
        }
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace()) {
        return Err("url must have a host".into());
    }
    let default_port = if scheme == "https" { 443 } else { 80 };
    let port = match port {
        Some(p) => p.parse::<u16>().map_err(|_| "url has a malformed port")?,
        None => default_port,
    };
    if !allow_insecure {
        if let Some(ip) = host_ip(&host)
            && is_forbidden_ip(ip)
        {
            return Err("url must not point to a private, loopback or link-local address".into());
        }
        let name = host.trim_end_matches('.').to_ascii_lowercase();
        if name == "localhost" || name.ends_with(".localhost") {
            return Err("url must not point to a private, loopback or link-local address".into());
        }
    }
    Ok(Target {
        scheme,
        host: host.to_ascii_lowercase(),
        port,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_gives_five_retries() {
        let s = DEFAULT_SCHEDULE;
        assert_eq!(next_delay(&s, 0), None);
        assert_eq!(next_delay(&s, 1), Some(Duration::from_secs(60)));
        assert_eq!(next_delay(&s, 5), Some(Duration::from_secs(43_200)));
        assert_eq!(
            next_delay(&s, 6),
            None,
            "1 attempt + 5 retries, then exhausted"
        );
    }

    #[test]
    fn forbidden_addresses() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "fc00::1",
            "febf:ffff::1",
            "::ffff:127.0.0.1",
            "255.255.255.255",
        ] {
            assert!(is_forbidden_ip(bad.parse().unwrap()), "{bad}");
        }
        // IPv6 forms that wrap a refused IPv4 address, and site-local.
        for bad in [
            "::127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::10.1.1.1",
            "2002:c0a8:0101::1",
            "2002:7f00:1::",
            "fec0::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        ] {
            assert!(is_forbidden_ip(bad.parse().unwrap()), "{bad}");
        }
        // The same wrappers around public addresses are fine.
        for ok in ["64:ff9b::8.8.8.8", "2002:0808:0808::1", "::ffff:8.8.8.8"] {
            assert!(!is_forbidden_ip(ok.parse().unwrap()), "{ok}");
        }
        for ok in ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"] {
            assert!(!is_forbidden_ip(ok.parse().unwrap()), "{ok}");
        }
    }

    #[test]
    fn urls_must_be_https_and_public() {
        assert_eq!(
            check_url("https://hooks.example.com/wm?x=1", false).unwrap(),
            Target {
                scheme: "https".into(),
                host: "hooks.example.com".into(),
                port: 443
            }
        );
        assert!(check_url("http://hooks.example.com", false).is_err());
        assert!(check_url("https://127.0.0.1/x", false).is_err());
        assert!(check_url("https://[::1]:8443/x", false).is_err());
        // Legacy IPv4 spellings the client's URL parser reads as loopback.
        for url in [
            "https://127.1/x",
            "https://2130706433/x",
            "https://0x7f.0.0.1/x",
            "https://0177.0.0.1/x",
            "https://127.0.0.1./x",
        ] {
            assert!(check_url(url, false).is_err(), "{url}");
        }
        assert!(
            check_url("https://1.1/x", false).is_ok(),
            "1.0.0.1 is public"
        );
        assert!(check_url("https://localhost/x", false).is_err());
        assert!(check_url("https://LocalHost./x", false).is_err());
        assert!(check_url("https://user:pw@example.com", false).is_err());
        assert!(check_url("ftp://example.com", false).is_err());
        assert!(check_url("example.com", false).is_err());
        let t = check_url("http://127.0.0.1:9000/hook", true).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("127.0.0.1", 9000));
    }
}
