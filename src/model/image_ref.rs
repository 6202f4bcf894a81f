//! Whether an image name is a Docker image reference, in the words of the library Kubernetes
//! uses to decide it (`distribution/reference`'s `ParseNormalizedNamed`).
//!
//! The API server accepts any non-empty image; the kubelet parses it before anything else
//! (`applyDefaultImageTag`) and never pulls a name that does not parse (`InvalidImageName`), and
//! the pull policy's default reads the tag the same way. Both need the one grammar, so it sits
//! here, below them. Hand-written rather than a regex crate, which the page would pay for.

/// Why `image` is not a Docker reference, in `ParseNormalizedNamed`'s words, or `None` if it is.
/// The grammar: `[host[:port]/]path[:tag][@algorithm:hex]`, with lowercase path components.
pub fn invalid_reference(image: &str) -> Option<String> {
    if image.len() == 64 && image.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Some(format!("invalid repository name ({image}), cannot specify 64-byte hexadecimal strings"));
    }
    let (domain, remainder) = split_docker_domain(image);
    // The lowercase check reads the remainder up to its first `:`, as upstream does.
    let remote = remainder.split(':').next().unwrap_or_default();
    if has_upper(remote) {
        return Some(format!("invalid reference format: repository name ({remote}) must be lowercase"));
    }
    parse_reference(&format!("{domain}/{remainder}")).err().map(str::to_string)
}

/// Upper case, as Go's `strings.ToLower(s) != s` finds it. ASCII only: any other letter fails the
/// grammar anyway, so only the wording of that error could differ.
fn has_upper(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_uppercase())
}

/// `splitDockerDomain`: the registry, and the rest with `library/` added for Docker Hub's own.
fn split_docker_domain(name: &str) -> (&str, String) {
    let Some((first, rest)) = name.split_once('/') else {
        return ("docker.io", format!("library/{name}"));
    };
    let (domain, remote) = if first == "localhost" || first.bytes().any(|b| b == b'.' || b == b':') || has_upper(first) {
        (if first == "index.docker.io" { "docker.io" } else { first }, rest)
    } else {
        ("docker.io", name)
    };
    if domain == "docker.io" && !remote.contains('/') {
        return (domain, format!("library/{remote}"));
    }
    (domain, remote.to_string())
}

/// `reference.Parse` of a name that has its domain: the grammar, then the path's length, then
/// the digest's algorithm and length.
fn parse_reference(s: &str) -> Result<(), &'static str> {
    if !matches_reference(s) {
        let lowercase_would_parse = has_upper(s) && matches_reference(&s.to_ascii_lowercase());
        return Err(if lowercase_would_parse { "repository name must be lowercase" } else { "invalid reference format" });
    }
    let (rest, digest) = s.split_once('@').map_or((s, None), |(r, d)| (r, Some(d)));
    let name = split_tag(rest).0;
    let path = name.split_once('/').filter(|(d, p)| is_domain(d) && is_remote_name(p)).map_or(name, |(_, p)| p);
    if path.len() > 255 {
        return Err("repository name must not be more than 255 characters");
    }
    match digest {
        Some(d) => validate_digest(d),
        None => Ok(()),
    }
}

/// `name [":" tag] ["@" digest]`: neither a name nor a tag holds `@`, and a tag holds no `/`.
fn matches_reference(s: &str) -> bool {
    let (rest, digest_ok) = match s.split_once('@') {
        Some((rest, digest)) => (rest, is_digest(digest)),
        None => (s, true),
    };
    let (name, tag) = split_tag(rest);
    digest_ok && tag.is_none_or(is_tag) && is_name(name)
}

/// A `:` after the last `/` starts the tag (a port's `:` comes before the path).
fn split_tag(s: &str) -> (&str, Option<&str>) {
    let path_start = s.rfind('/').map_or(0, |i| i + 1);
    match s[path_start..].rfind(':') {
        Some(i) => (&s[..path_start + i], Some(&s[path_start + i + 1..])),
        None => (s, None),
    }
}

/// `[domain "/"] remote-name`.
fn is_name(s: &str) -> bool {
    is_remote_name(s) || s.split_once('/').is_some_and(|(d, p)| is_domain(d) && is_remote_name(p))
}

/// Path components of lowercase letters and digits, joined by `.`, `_`, `__` or runs of `-`.
fn is_remote_name(s: &str) -> bool {
    s.split('/').all(is_path_component)
}

fn is_path_component(c: &str) -> bool {
    let b = c.as_bytes();
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-')) {
            return false;
        }
    }
    true
}

/// `host[:port]`: DNS-like labels joined by `.` (upper case allowed), or `[IPv6]`.
fn is_domain(s: &str) -> bool {
    let (host, port) = match s.rfind(':') {
        Some(i) if !s[i..].contains(']') => (&s[..i], Some(&s[i + 1..])),
        _ => (s, None),
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_hexdigit() || b == b':');
    }
    host.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|x| x.is_ascii_alphanumeric() || *x == b'-')
    })
}

/// `[\w][\w.-]{0,127}`.
fn is_tag(t: &str) -> bool {
    let word = |x: u8| x.is_ascii_alphanumeric() || x == b'_';
    let b = t.as_bytes();
    !b.is_empty() && b.len() <= 128 && word(b[0]) && b.iter().all(|&x| word(x) || x == b'.' || x == b'-')
}

/// `algorithm ":" hex`, the algorithm's components joined by `-_+.`, at least 32 hex digits.
fn is_digest(d: &str) -> bool {
    let Some((algorithm, hex)) = d.split_once(':') else { return false };
    // Components start with a letter; a separator is followed by one.
    let b = algorithm.as_bytes();
    let separator = |x: u8| matches!(x, b'-' | b'_' | b'+' | b'.');
    let algorithm_ok = b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter().all(|x| x.is_ascii_alphanumeric() || separator(*x))
        && b.windows(2).all(|w| !separator(w[0]) || w[1].is_ascii_alphabetic())
        && !b.last().copied().is_some_and(separator);
    algorithm_ok && hex.len() >= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// go-digest's `Validate`: a known algorithm, its length, lowercase hex.
fn validate_digest(d: &str) -> Result<(), &'static str> {
    let (algorithm, hex) = d.split_once(':').unwrap_or((d, ""));
    let size = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return Err("unsupported digest algorithm"),
    };
    if hex.len() != size {
        return Err("invalid checksum digest length");
    }
    if !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err("invalid checksum digest format");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_parse_as_docker_references_or_say_why_not() {
        let digest = "a".repeat(64);
        for good in [
            "nginx",
            "nginx:1.14.2",
            "bitnami/redis:7",
            "registry.k8s.io/pause:3.10",
            "localhost:5000/app",
            "Example.COM/team/app:V1_x",
            "[::1]:5000/app",
            "a__b/c-----d/e.f_g:latest",
        ] {
            assert_eq!(invalid_reference(good), None, "{good}");
        }
        assert_eq!(invalid_reference(&format!("nginx@sha256:{digest}")), None);
        assert_eq!(invalid_reference(&format!("nginx:1.14@sha256:{digest}")), None);
        let cases = [
            ("Nginx:1.14.2", "invalid reference format: repository name (library/Nginx) must be lowercase"),
            ("bitnami/Redis", "invalid reference format: repository name (bitnami/Redis) must be lowercase"),
            ("nginx:1.14.2:x", "invalid reference format"),
            ("nginx:", "invalid reference format"),
            ("nginx:-tag", "invalid reference format"),
            ("ngin x", "invalid reference format"),
            ("nginx/", "invalid reference format"),
            ("a._b", "invalid reference format"),
            ("a___b", "invalid reference format"),
            ("-nginx", "invalid reference format"),
            ("nginx@sha256:abc", "invalid reference format"),
            (" nginx", "invalid reference format"),
        ];
        for (bad, why) in cases {
            assert_eq!(invalid_reference(bad).as_deref(), Some(why), "{bad}");
        }
        assert_eq!(invalid_reference(&format!("nginx:{}", "t".repeat(129))).as_deref(), Some("invalid reference format"));
        assert_eq!(invalid_reference(&format!("nginx@sha256:{}", "a".repeat(40))).as_deref(), Some("invalid checksum digest length"));
        assert_eq!(invalid_reference(&format!("nginx@sha256:{}", "A".repeat(64))).as_deref(), Some("invalid checksum digest format"));
        assert_eq!(invalid_reference(&format!("nginx@md5:{digest}")).as_deref(), Some("unsupported digest algorithm"));
        assert_eq!(invalid_reference(&format!("nginx@sha256+b64u:{digest}")).as_deref(), Some("unsupported digest algorithm"));
        assert_eq!(invalid_reference(&format!("nginx@sha256-:{digest}")).as_deref(), Some("invalid reference format"));
        assert_eq!(invalid_reference(&format!("nginx@sha-1:{digest}")).as_deref(), Some("invalid reference format"));
        assert_eq!(invalid_reference(&format!("nginx@2sha:{digest}")).as_deref(), Some("invalid reference format"));
        assert_eq!(
            invalid_reference(&digest).as_deref(),
            Some(format!("invalid repository name ({digest}), cannot specify 64-byte hexadecimal strings").as_str())
        );
        let long = format!("registry.example.com/{}", "a".repeat(256));
        assert_eq!(invalid_reference(&long).as_deref(), Some("repository name must not be more than 255 characters"));
    }
}
