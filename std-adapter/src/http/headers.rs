//! Header parsing for [`super::HttpSource`]: `Content-Range`,
//! `Content-Length`, `Location` resolution (RFC 9110 §14.4, §8.6, §10.2.2).

use ureq::http::{header, Response};
use ureq::Body;

#[allow(clippy::type_complexity)]
pub(super) fn parse_content_range(v: &str) -> Option<(Option<(u64, u64)>, Option<u64>)> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse::<u64>().ok()?),
    };
    let range = match range.trim() {
        "*" => None,
        r => {
            let (a, b) = r.split_once('-')?;
            let (a, b) = (a.trim().parse::<u64>().ok()?, b.trim().parse::<u64>().ok()?);
            if b < a {
                return None;
            }
            Some((a, b))
        }
    };
    Some((range, total))
}

/// The scheme of `url` when it has one (`http`, `ftp`, ...), lowercased.
pub(super) fn scheme(url: &str) -> Option<String> {
    let (s, _) = url.split_once(':')?;
    let mut chars = s.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then(|| s.to_ascii_lowercase())
}

/// Whether `s` is an `http:` or `https:` URL (what the CLI reads over HTTP).
pub fn is_http_url(s: &str) -> bool {
    matches!(scheme(s).as_deref(), Some("http" | "https"))
        && s.get(s.find(':').unwrap_or(0)..).is_some_and(|r| r.starts_with("://"))
}

/// Resolves a `Location` against the URL it came from (RFC 3986 §5.2, the
/// forms servers send: absolute, scheme-relative, absolute path, relative
/// path). Only `http:` and `https:` targets are accepted.
pub(super) fn resolve_location(base: &str, loc: &str) -> std::result::Result<String, String> {
    let loc = loc.trim();
    if loc.is_empty() {
        return Err("redirect with an empty Location".into());
    }
    let target = if let Some(s) = scheme(loc) {
        if s != "http" && s != "https" {
            return Err(format!(
                "redirect to a {s}: URL refused (only http and https are followed)"
            ));
        }
        loc.to_owned()
    } else {
        let (bscheme, rest) = base.split_once("://").ok_or("bad base URL")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, "/"),
        };
        if let Some(l) = loc.strip_prefix("//") {
            format!("{bscheme}://{l}")
        } else if loc.starts_with('/') {
            format!("{bscheme}://{authority}{loc}")
        } else {
            // Relative path: replace the last segment of the base path
            // (query and fragment dropped).
            let path = path.split(['?', '#']).next().unwrap_or("/");
            let dir = path.rfind('/').map_or("/", |i| path.get(..=i).unwrap_or("/"));
            format!("{bscheme}://{authority}{dir}{loc}")
        }
    };
    if !is_http_url(&target) {
        return Err(format!(
            "redirect to {target:?} refused (only http and https are followed)"
        ));
    }
    Ok(target)
}

pub(super) fn header_str(r: &Response<Body>, name: header::HeaderName) -> Option<&str> {
    r.headers().get(name).and_then(|v| v.to_str().ok())
}

/// What is wrong with the `Content-Range` of a `206` that cannot be used,
/// for a request of bytes `start..=last`.
pub(super) fn content_range_problem(raw: Option<&str>, start: u64, last: u64) -> String {
    match raw {
        None => format!("206 without a Content-Range (asked bytes={start}-{last})"),
        Some(v) => match parse_content_range(v) {
            Some((None, _)) => format!("206 with no range in Content-Range: {v} (asked bytes={start}-{last})"),
            _ => format!("206 with an unreadable Content-Range: {v:?} (asked bytes={start}-{last})"),
        },
    }
}

pub(super) fn content_length(r: &Response<Body>) -> Option<u64> {
    header_str(r, header::CONTENT_LENGTH).and_then(|v| v.trim().parse().ok())
}

/// The `std::io::ErrorKind` closest to a ureq error.
pub(super) fn ureq_kind(e: &ureq::Error) -> std::io::ErrorKind {
    match e {
        ureq::Error::Io(e) => e.kind(),
        ureq::Error::Timeout(_) => std::io::ErrorKind::TimedOut,
        ureq::Error::HostNotFound => std::io::ErrorKind::NotFound,
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => std::io::ErrorKind::InvalidInput,
        ureq::Error::Protocol(_) => std::io::ErrorKind::InvalidData,
        _ => std::io::ErrorKind::Other,
    }
}
