//! Which addresses are not the public internet (docs/network-safety.md, "What is fetched"), by
//! class, so that a server-chosen URL cannot make the client reach the host's own network.
//!
//! IPv4-mapped addresses are unmapped first (`::ffff:127.0.0.1` is loopback). IPv4-compatible
//! ones (`::7f00:1`, which escapes both `is_loopback` and `to_ipv4_mapped`) and the other IPv6
//! ranges that embed or translate IPv4 (NAT64, 6to4) are refused outright: they could lead
//! anywhere. std's `is_shared`, `is_benchmarking` and `is_global` are unstable, so the ranges
//! are spelled out here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The kind of non-public address. The first four may be opened (when the MCP server itself is
/// in the class, or by the host's settings); `Special` never is, except by an explicit allow entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// 127/8, ::1.
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, fc00::/7 (unique local).
    Private,
    /// 100.64/10 (carrier-grade NAT).
    Shared,
    /// 169.254/16 (the cloud metadata service), fe80::/10.
    LinkLocal,
    /// Unspecified, documentation, benchmarking, reserved, multicast, broadcast, and the IPv6
    /// ranges that embed or translate IPv4.
    Special,
}

impl Class {
    pub fn describe(self) -> &'static str {
        match self {
            Class::Loopback => "a loopback address",
            Class::Private => "a private-network address",
            Class::Shared => "a carrier-grade NAT address",
            Class::LinkLocal => "a link-local address",
            Class::Special => "a special-purpose address",
        }
    }
}

/// `None`: a public address.
pub(crate) fn classify(ip: IpAddr) -> Option<Class> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => classify_v4(v4),
            None => classify_v6(v6),
        },
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix) };
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = if prefix == 0 { 0 } else { u128::MAX << (128 - prefix) };
    u128::from(ip) & mask == u128::from(Ipv6Addr::from(net)) & mask
}

fn classify_v4(ip: Ipv4Addr) -> Option<Class> {
    const SPECIAL: &[([u8; 4], u32)] = &[
        ([0, 0, 0, 0], 8),
        ([192, 0, 0, 0], 24),
        ([192, 0, 2, 0], 24),
        ([198, 51, 100, 0], 24),
        ([203, 0, 113, 0], 24),
        ([198, 18, 0, 0], 15),
        ([224, 0, 0, 0], 4),
        ([240, 0, 0, 0], 4),
    ];
    if ip.is_loopback() {
        Some(Class::Loopback)
    } else if ip.is_private() {
        Some(Class::Private)
    } else if in_v4(ip, [100, 64, 0, 0], 10) {
        Some(Class::Shared)
    } else if ip.is_link_local() {
        Some(Class::LinkLocal)
    } else if SPECIAL.iter().any(|(net, p)| in_v4(ip, *net, *p)) {
        Some(Class::Special)
    } else {
        None
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<Class> {
    const SPECIAL: &[([u16; 8], u32)] = &[
        ([0, 0, 0, 0, 0, 0, 0, 0], 96),          // unspecified and IPv4-compatible
        ([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96),  // NAT64
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),  // local NAT64
        ([0x100, 0, 0, 0, 0, 0, 0, 0], 64),      // discard
        ([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32), // documentation
        ([0x2002, 0, 0, 0, 0, 0, 0, 0], 16),     // 6to4
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10),     // site-local
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),      // multicast
    ];
    if ip.is_loopback() {
        Some(Class::Loopback)
    } else if in_v6(ip, [0xfc00, 0, 0, 0, 0, 0, 0, 0], 7) {
        Some(Class::Private)
    } else if in_v6(ip, [0xfe80, 0, 0, 0, 0, 0, 0, 0], 10) {
        Some(Class::LinkLocal)
    } else if SPECIAL.iter().any(|(net, p)| in_v6(ip, *net, *p)) {
        Some(Class::Special)
    } else {
        None
    }
}

/// An address range of a host's allow or deny list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Net {
    addr: IpAddr,
    prefix: u32,
}

impl Net {
    /// `a.b.c.d`, `a.b.c.d/n`, an IPv6 address, `v6/n` (brackets allowed).
    pub fn parse(text: &str) -> Option<Net> {
        let (addr, prefix) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p.parse::<u32>().ok()?)),
            None => (text, None),
        };
        let addr: IpAddr = addr.trim_start_matches('[').trim_end_matches(']').parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(max);
        (prefix <= max).then_some(Net { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => in_v4(ip, net.octets(), self.prefix),
            (IpAddr::V6(net), IpAddr::V6(ip)) => in_v6(ip, net.segments(), self.prefix),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<Class> {
        classify(s.parse().unwrap())
    }

    #[test]
    fn the_special_ranges() {
        use Class::*;
        for (ip, want) in [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("::1", Some(Loopback)),
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("10.0.0.1", Some(Private)),
            ("172.16.5.4", Some(Private)),
            ("172.32.0.1", None),
            ("192.168.1.1", Some(Private)),
            ("fd00:ec2::254", Some(Private)),
            ("100.64.0.1", Some(Shared)),
            ("100.128.0.1", None),
            ("169.254.169.254", Some(LinkLocal)),
            ("::ffff:a9fe:a9fe", Some(LinkLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("0.0.0.0", Some(Special)),
            ("::", Some(Special)),
            ("::7f00:1", Some(Special)),
            ("64:ff9b::a9fe:a9fe", Some(Special)),
            ("2002:7f00:1::", Some(Special)),
            ("192.0.2.1", Some(Special)),
            ("198.19.0.1", Some(Special)),
            ("224.0.0.1", Some(Special)),
            ("255.255.255.255", Some(Special)),
            ("ff02::1", Some(Special)),
            ("2001:db8::1", Some(Special)),
            ("93.184.216.34", None),
            ("2606:4700::1111", None),
        ] {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn nets() {
        let n = Net::parse("10.0.0.0/8").unwrap();
        assert!(n.contains("10.9.8.7".parse().unwrap()));
        assert!(n.contains("::ffff:10.9.8.7".parse().unwrap()));
        assert!(!n.contains("11.0.0.1".parse().unwrap()));
        assert!(Net::parse("[fd00::]/8").unwrap().contains("fd12::1".parse().unwrap()));
        assert_eq!(Net::parse("127.0.0.1"), Net::parse("127.0.0.1/32"));
        assert!(Net::parse("10.0.0.0/33").is_none());
        assert!(Net::parse("example.com").is_none());
    }
}
