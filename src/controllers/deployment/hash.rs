//! The pod-template-hash: the name a Deployment gives each version of its pod template.
//!
//! Upstream (`controller.ComputeHash`) feeds Go's `spew` deep print of the `PodTemplateSpec` to
//! FNV-32a, appends the Deployment's `collisionCount` as eight little-endian bytes, prints the
//! 32-bit sum in decimal and maps every digit through `rand.SafeEncodeString`. A byte-exact copy
//! of spew's output is out of reach in Rust, so the bytes hashed here are the template's canonical
//! JSON (serde, maps ordered) with the `pod-template-hash` label removed. Everything after that is
//! upstream's algorithm, so the hashes look like real ones (`76c4c67cf8`, only the characters
//! `4-9bcdf`), are stable for a template across runs and platforms, change with any field of the
//! template, and move to a fresh value when `collisionCount` is bumped after a name collision.

use crate::model::PodTemplateSpec;
use crate::rng::NAME_ALPHABET;

/// The label every ReplicaSet of a Deployment (and its pods) carries with its template's hash.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";

const FNV32_OFFSET: u32 = 0x811c_9dc5;
const FNV32_PRIME: u32 = 0x0100_0193;

/// FNV-1a, 32 bits (Go's `hash/fnv.New32a`).
#[derive(Clone, Copy, Debug)]
pub struct Fnv32a(u32);

impl Default for Fnv32a {
    fn default() -> Self {
        Fnv32a(FNV32_OFFSET)
    }
}

impl Fnv32a {
    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u32::from(*b);
            self.0 = self.0.wrapping_mul(FNV32_PRIME);
        }
    }
    pub fn sum32(self) -> u32 {
        self.0
    }
}

/// `rand.SafeEncodeString`: each byte picks a character of the no-vowel alphabet, so generated
/// names never spell words.
pub fn safe_encode(s: &str) -> String {
    s.bytes().map(|b| NAME_ALPHABET[usize::from(b) % NAME_ALPHABET.len()] as char).collect()
}

/// The hash of a pod template, as the ReplicaSet name suffix and `pod-template-hash` label.
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> String {
    let mut hasher = Fnv32a::default();
    hasher.write(&canonical_bytes(template));
    if let Some(count) = collision_count {
        // Upstream writes the uint32 into an 8-byte buffer, so four zero bytes follow.
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&(count as u32).to_le_bytes());
        hasher.write(&bytes);
    }
    safe_encode(&hasher.sum32().to_string())
}

/// What is hashed: the template without its own hash label, so a ReplicaSet's template and the
/// Deployment's template that produced it hash alike.
fn canonical_bytes(template: &PodTemplateSpec) -> Vec<u8> {
    if template.metadata.labels.contains_key(POD_TEMPLATE_HASH) {
        let mut copy = template.clone();
        copy.metadata.labels.remove(POD_TEMPLATE_HASH);
        serde_json::to_vec(&copy).unwrap_or_default()
    } else {
        serde_json::to_vec(template).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Container;

    fn template(image: &str) -> PodTemplateSpec {
        let mut t = PodTemplateSpec::default();
        t.metadata.labels.insert("app".into(), "web".into());
        t.spec.containers.push(Container { name: "nginx".into(), image: image.into(), ..Default::default() });
        t
    }

    #[test]
    fn fnv32a_matches_the_reference_vectors() {
        let sum = |s: &str| {
            let mut h = Fnv32a::default();
            h.write(s.as_bytes());
            h.sum32()
        };
        assert_eq!(sum(""), 0x811c_9dc5);
        assert_eq!(sum("a"), 0xe40c_292c);
        assert_eq!(sum("foobar"), 0xbf9c_f968);
    }

    #[test]
    fn safe_encoding_maps_decimal_digits_to_the_characters_real_hashes_use() {
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
    }

    #[test]
    fn a_template_hash_is_stable_and_changes_with_the_template() {
        let a = compute_hash(&template("nginx:1.14.2"), None);
        assert_eq!(a, compute_hash(&template("nginx:1.14.2"), None));
        assert_eq!(a, "76c4c67cf8", "the hash of a fixed template must never drift");
        assert!(a.bytes().all(|c| b"456789bcdf".contains(&c)), "{a}");
        assert_ne!(a, compute_hash(&template("nginx:1.16.1"), None));
    }

    #[test]
    fn the_hash_label_is_ignored_and_the_collision_count_moves_the_hash() {
        let plain = template("nginx:1.14.2");
        let mut labelled = plain.clone();
        labelled.metadata.labels.insert(POD_TEMPLATE_HASH.into(), "whatever".into());
        assert_eq!(compute_hash(&plain, None), compute_hash(&labelled, None));
        let first = compute_hash(&plain, Some(0));
        assert_ne!(first, compute_hash(&plain, None), "a zero collisionCount is still hashed, as upstream");
        assert_ne!(first, compute_hash(&plain, Some(1)));
    }
}
