//! The simulation's one source of chance: a seeded PRNG (SplitMix64).
//!
//! Never the OS's randomness: every generated pod name, UID and jittered latency comes from here,
//! so a seed fixes the whole run, natively and in wasm32 alike (only 64-bit integer arithmetic).

/// The alphabet of generated name suffixes (k8s.io/apimachinery/pkg/util/rand): no vowels, no
/// look-alike characters, so no words and no confusion between `0` and `o`.
pub const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng { state: seed ^ 0x9E37_79B9_7F4A_7C15 }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0), by multiply-shift, which has no modulo bias worth noticing here.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// A value in `base ± jitter_fraction·base`.
    pub fn jitter(&mut self, base: u64, jitter_fraction: f64) -> u64 {
        let spread = (base as f64 * jitter_fraction) as u64;
        if spread == 0 {
            return base;
        }
        base - spread + self.below(2 * spread + 1)
    }
    /// `utilrand.String(n)`: the random part of generated names.
    pub fn name_suffix(&mut self, n: usize) -> String {
        (0..n).map(|_| NAME_ALPHABET[self.below(NAME_ALPHABET.len() as u64) as usize] as char).collect()
    }
    /// A version-4 UUID in the usual text form.
    pub fn uuid(&mut self) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        // `{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}` written by hand: one per object created.
        let mut uuid = String::with_capacity(36);
        for (value, digits) in [(a >> 32, 8), (a >> 16, 4), (0x4000 | (a & 0x0fff), 4), (((b >> 48) & 0x3fff) | 0x8000, 4), (b, 12)] {
            if !uuid.is_empty() {
                uuid.push('-');
            }
            uuid.extend((0..digits).rev().map(|i| char::from(b"0123456789abcdef"[((value >> (4 * i)) & 0xf) as usize])));
        }
        uuid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(Rng::new(8).next_u64(), xs[0]);
    }

    #[test]
    fn name_suffixes_use_the_kubernetes_alphabet() {
        let mut rng = Rng::new(1);
        let s = rng.name_suffix(5);
        assert_eq!(s.len(), 5);
        assert!(s.bytes().all(|c| NAME_ALPHABET.contains(&c)));
        let u = rng.uuid();
        assert_eq!(u.len(), 36);
        let (a, b) = {
            let mut again = Rng::new(1);
            again.name_suffix(5);
            (again.next_u64(), again.next_u64())
        };
        let formatted = format!(
            "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0x0fff,
            ((b >> 48) & 0x3fff) | 0x8000,
            b & 0xffff_ffff_ffff
        );
        assert_eq!(u, formatted);
        assert_eq!(&u[14..15], "4");
    }

    #[test]
    fn jitter_stays_within_its_band() {
        let mut rng = Rng::new(3);
        for _ in 0..1000 {
            let v = rng.jitter(100, 0.2);
            assert!((80..=120).contains(&v));
        }
    }
}
