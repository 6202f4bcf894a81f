//! A cheap, deterministic hasher for the hash maps on the simulation's hot paths.
//!
//! std's default SipHash resists hash flooding, which a simulation fed by its own objects does not
//! need, and it showed up in profiles of large runs (every informer write hashes an owner UID and a
//! node name). This is the Fx hash rustc uses for its own tables: one rotate, xor and multiply per
//! eight bytes. It has no random seed, so a map's layout is the same in every run; nothing may
//! iterate these maps where the order could reach behaviour (they are only looked up).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

#[derive(Clone, Copy, Debug, Default)]
pub struct FxHasher {
    hash: u64,
}

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    #[inline]
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The multiply leaves the low bits weakest; hashbrown picks buckets from them.
        self.hash.rotate_left(26)
    }
}

/// A `HashMap` with the Fx hasher.
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A `HashSet` with the Fx hasher.
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash_of(v: impl Hash) -> u64 {
        BuildHasherDefault::<FxHasher>::default().hash_one(v)
    }

    #[test]
    fn equal_keys_hash_alike_and_different_keys_apart() {
        assert_eq!(hash_of("node-17"), hash_of(String::from("node-17")));
        assert_ne!(hash_of("node-17"), hash_of("node-71"));
        // A short tail is not confused with the same bytes padded by zeros.
        assert_ne!(hash_of(&b"ab"[..]), hash_of(&b"ab\0"[..]));
    }

    #[test]
    fn a_map_finds_every_key_it_was_given() {
        let mut map: FastMap<String, usize> = FastMap::default();
        for i in 0..10_000 {
            map.insert(format!("uid-{i}"), i);
        }
        assert_eq!(map.len(), 10_000);
        assert!((0..10_000).all(|i| map.get(&format!("uid-{i}")) == Some(&i)));
    }
}
