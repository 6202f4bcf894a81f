//! Image names as containerd sees them, and what a registry answers for them.
//!
//! The kubelet's messages quote the image as the pod spec wrote it (`nginx:1.14.2`), while the
//! container statuses show the runtime's fully qualified name (`docker.io/library/nginx:1.14.2`)
//! and a digest. There is no registry here: sizes and digests are derived from the name, so the
//! same image has the same digest on every node and in every run.

use crate::model::Pod;

/// The annotation that makes every pull of a pod's images fail (a simulated registry outage).
pub const ANNOTATION_PULL_FAILS: &str = "kubeloop.dev/image-pull-fails";
/// The tag that no registry has: pulling it fails with "not found".
pub const MISSING_TAG: &str = "doesnotexist";

/// `docker.io/library/nginx:1.14.2` from `nginx:1.14.2`; `:latest` when untagged.
pub fn normalize(image: &str) -> String {
    let (name, suffix) = split_reference(image);
    let first = name.split('/').next().unwrap_or_default();
    let has_registry = name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let registry = if has_registry {
        ""
    } else if name.contains('/') {
        "docker.io/"
    } else {
        "docker.io/library/"
    };
    // Built by hand rather than with `format!`: twice per pod a kubelet starts.
    let mut qualified = String::with_capacity(registry.len() + name.len() + suffix.len());
    qualified.push_str(registry);
    qualified.push_str(name);
    qualified.push_str(&suffix);
    qualified
}

/// Registries that were renamed and still serve under their old name: `k8s.gcr.io` has redirected
/// to `registry.k8s.io` since 2023, so `k8s.gcr.io/liveness` (the documentation's older
/// `http-liveness.yaml`) pulls the very image `registry.k8s.io/liveness` names.
const RENAMED_REGISTRIES: &[(&str, &str)] = &[("k8s.gcr.io/", "registry.k8s.io/")];

/// The one name under which an image is known for what it *is* — its program (the container
/// model), digest and size — whatever registry alias the spec wrote: `normalize`, then a renamed
/// registry's old name replaced by the new. What containerd and the kubelet print keeps the name
/// as pulled (`normalize`), as on a real node.
pub fn canonical(image: &str) -> String {
    let normalized = normalize(image);
    for (old, new) in RENAMED_REGISTRIES {
        if let Some(rest) = normalized.strip_prefix(old) {
            return format!("{new}{rest}");
        }
    }
    normalized
}

/// The canonical repository, without tag or digest (`registry.k8s.io/liveness`).
pub fn canonical_repository(image: &str) -> String {
    repository(&canonical(image)).to_string()
}

/// Splits `repo[:tag][@digest]` into the repository and its `:tag`/`@digest` suffix
/// (`:latest` when neither is given). A `:` inside the registry host (`host:5000/x`) is no tag.
fn split_reference(image: &str) -> (&str, String) {
    if let Some(at) = image.find('@') {
        return (&image[..at], image[at..].to_string());
    }
    let last_slash = image.rfind('/').map(|i| i + 1).unwrap_or(0);
    match image[last_slash..].rfind(':') {
        Some(colon) => (&image[..last_slash + colon], image[last_slash + colon..].to_string()),
        None => (image, ":latest".to_string()),
    }
}

/// The repository part without tag or digest (`docker.io/library/nginx`).
fn repository(normalized: &str) -> &str {
    split_reference(normalized).0
}

/// 64-bit FNV-1a, for stable per-name values (digests, sizes) on every platform.
pub fn fnv1a(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A sha256-looking digest, stable for the image (the same under a renamed registry's old name).
pub fn digest(normalized: &str) -> String {
    let mut out = String::with_capacity(64);
    let mut h = fnv1a(&canonical(normalized));
    for round in 0..4u64 {
        h = fnv1a(&format!("{h:016x}{round}"));
        out.push_str(&format!("{h:016x}"));
    }
    out
}

/// `imageID` as containerd reports it: `docker.io/library/nginx@sha256:…`.
pub fn image_id(normalized: &str) -> String {
    format!("{}@sha256:{}", repository(normalized), digest(normalized))
}

/// The image's unpacked size in bytes, 20–180 MB, stable for the image ("Image size: N bytes").
pub fn size_bytes(normalized: &str) -> u64 {
    20_000_000 + fnv1a(&canonical(normalized)) % 160_000_000
}

/// Why a pull of `image` for `pod` fails, if it does: containerd's error text.
pub fn pull_failure(pod: &Pod, image: &str) -> Option<String> {
    let normalized = normalize(image);
    let tag_missing = split_reference(image).1 == format!(":{MISSING_TAG}");
    if tag_missing {
        return Some(format!(
            "rpc error: code = NotFound desc = failed to pull and unpack image {normalized:?}: failed to resolve reference {normalized:?}: {normalized}: not found"
        ));
    }
    let outage = pod.metadata.annotations.get(ANNOTATION_PULL_FAILS).is_some_and(|v| v == "true");
    outage.then(|| {
        let repo = repository(&normalized);
        let (host, path) = repo.split_once('/').unwrap_or((repo, ""));
        let host = if host == "docker.io" { "registry-1.docker.io" } else { host };
        let tag = split_reference(&normalized).1;
        let reference = tag.trim_start_matches([':', '@']);
        format!(
            "rpc error: code = Unknown desc = failed to pull and unpack image {normalized:?}: failed to resolve reference {normalized:?}: failed to do request: Head \"https://{host}/v2/{path}/manifests/{reference}\": dial tcp: lookup {host}: i/o timeout"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_qualified_like_containerd_does() {
        assert_eq!(normalize("nginx:1.14.2"), "docker.io/library/nginx:1.14.2");
        assert_eq!(normalize("nginx"), "docker.io/library/nginx:latest");
        assert_eq!(normalize("bitnami/redis:7"), "docker.io/bitnami/redis:7");
        assert_eq!(normalize("registry.k8s.io/pause:3.10"), "registry.k8s.io/pause:3.10");
        assert_eq!(normalize("localhost:5000/app"), "localhost:5000/app:latest");
        assert!(image_id("docker.io/library/nginx:1.14.2").starts_with("docker.io/library/nginx@sha256:"));
        assert_eq!(digest("docker.io/library/nginx:1.14.2").len(), 64);
        assert_eq!(digest("a"), digest("a"));
        assert_ne!(digest("a"), digest("b"));
    }

    #[test]
    fn k8s_gcr_io_is_the_same_image_as_registry_k8s_io_but_keeps_its_name() {
        assert_eq!(canonical("k8s.gcr.io/liveness"), "registry.k8s.io/liveness:latest");
        assert_eq!(canonical_repository("k8s.gcr.io/liveness"), "registry.k8s.io/liveness");
        assert_eq!(canonical("registry.k8s.io/liveness"), "registry.k8s.io/liveness:latest");
        assert_eq!(canonical("nginx:1.14.2"), "docker.io/library/nginx:1.14.2");
        assert_eq!(canonical("example.com/k8s.gcr.io/x"), "example.com/k8s.gcr.io/x:latest");
        assert_eq!(normalize("k8s.gcr.io/liveness"), "k8s.gcr.io/liveness:latest", "containerd keeps the name pulled");
        let (old, new) = (normalize("k8s.gcr.io/liveness"), normalize("registry.k8s.io/liveness"));
        assert_eq!(digest(&old), digest(&new));
        assert_eq!(size_bytes(&old), size_bytes(&new));
        assert!(image_id(&old).starts_with("k8s.gcr.io/liveness@sha256:"));
    }

    #[test]
    fn a_missing_tag_fails_with_containerds_not_found() {
        let pod = Pod::default();
        let err = pull_failure(&pod, "nginx:doesnotexist").unwrap();
        assert_eq!(
            err,
            "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/nginx:doesnotexist\": failed to resolve reference \"docker.io/library/nginx:doesnotexist\": docker.io/library/nginx:doesnotexist: not found"
        );
        assert_eq!(pull_failure(&pod, "nginx:1.14.2"), None);
        let mut outage = Pod::default();
        outage.metadata.annotations.insert(ANNOTATION_PULL_FAILS.into(), "true".into());
        let err = pull_failure(&outage, "nginx:1.14.2").unwrap();
        assert!(err.contains("Head \"https://registry-1.docker.io/v2/library/nginx/manifests/1.14.2\""), "{err}");
    }
}
