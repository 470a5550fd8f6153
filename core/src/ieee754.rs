//! IEEE 754 binary floating-point values that containers store (Matroska
//! float elements, FLV AMF numbers, the CAF and QuickTime sample rates,
//! AIFF's 80-bit extended rate), taken apart and converted with integer
//! arithmetic.
//!
//! Each conversion gives what the `f64` expression it replaces gives
//! (`v * k as f64`, `v / k as f64`, `as u64`, `libm::round`): products and
//! quotients are rounded once to 53 bits, to nearest with ties to even
//! (IEEE 754-2019 §4.3.1), as the hardware or the soft-float routines do.
//! The point is the firmware: without this module the soft-float routines
//! for `f64` addition, multiplication, division, comparison and conversion
//! (about 4 KiB on thumbv7em) are linked for a handful of header fields.
//! The tests compare every operation with `f64` arithmetic on random values.

#![allow(
    dead_code,
    reason = "each item serves some of the formats; a build without them leaves it unused"
)]

use core::cmp::Ordering;

use crate::types::div_u128;

/// Bits of a binary64 significand, the hidden bit included.
const PRECISION: u32 = 53;

/// A finite binary floating-point value: `-1^neg × mant × 2^exp`, exactly.
/// The exponent is not bounded as binary64's is, so a product that would
/// overflow to infinity in `f64` stays a (very large) finite value here;
/// every conversion out of it checks its range, as the `f64` code checked
/// `is_finite()` and the range together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Float {
    neg: bool,
    mant: u64,
    exp: i32,
}

impl Float {
    /// Zero.
    pub(crate) const ZERO: Float = Float {
        neg: false,
        mant: 0,
        exp: 0,
    };

    /// The value of binary64 bits (IEEE 754-2019 §3.4); `None` for an
    /// infinity or a NaN.
    pub(crate) const fn from_f64_bits(bits: u64) -> Option<Float> {
        let neg = bits >> 63 != 0;
        let field = ((bits >> 52) & 0x7FF) as i32;
        let frac = bits & ((1 << 52) - 1);
        match field {
            0x7FF => None,
            0 => Some(Float {
                neg,
                mant: frac,
                exp: -1074,
            }),
            _ => Some(Float {
                neg,
                mant: frac | 1 << 52,
                exp: field - 1075,
            }),
        }
    }

    /// The value of big-endian binary64 bytes.
    pub(crate) const fn from_be_f64(b: [u8; 8]) -> Option<Float> {
        Self::from_f64_bits(u64::from_be_bytes(b))
    }

    /// The value of big-endian binary32 bytes (widening to binary64 is
    /// exact); `None` for an infinity or a NaN.
    pub(crate) const fn from_be_f32(b: [u8; 4]) -> Option<Float> {
        let bits = u32::from_be_bytes(b);
        let neg = bits >> 31 != 0;
        let field = ((bits >> 23) & 0xFF) as i32;
        let frac = (bits & ((1 << 23) - 1)) as u64;
        match field {
            0xFF => None,
            0 => Some(Float {
                neg,
                mant: frac,
                exp: -149,
            }),
            _ => Some(Float {
                neg,
                mant: frac | 1 << 23,
                exp: field - 150,
            }),
        }
    }

    /// `k as f64`: `k` rounded to 53 bits.
    pub(crate) fn from_u64(k: u64) -> Float {
        round_to_precision(false, k as u128, 0, false)
    }

    /// `mant × 2^exp` for a non-negative `mant` rounded to 53 bits, as
    /// `libm::ldexp(mant as f64, exp)` (the 80-bit extended format's
    /// explicit 64-bit significand, AIFF's rate).
    pub(crate) fn from_scaled_u64(mant: u64, exp: i32) -> Float {
        let f = Self::from_u64(mant);
        Float {
            exp: f.exp.saturating_add(exp),
            ..f
        }
    }

    /// Above zero.
    pub(crate) const fn is_positive(self) -> bool {
        !self.neg && self.mant != 0
    }

    /// Below zero (negative zero is not).
    pub(crate) const fn is_negative(self) -> bool {
        self.neg && self.mant != 0
    }

    /// `self * other`, rounded as binary64 multiplication rounds.
    pub(crate) fn mul(self, other: Float) -> Float {
        let p = self.mant as u128 * other.mant as u128;
        round_to_precision(self.neg != other.neg, p, self.exp.saturating_add(other.exp), false)
    }

    /// `self / other`, rounded as binary64 division rounds; `None` when
    /// `other` is zero.
    pub(crate) fn div(self, other: Float) -> Option<Float> {
        if other.mant == 0 {
            return None;
        }
        if self.mant == 0 {
            return Some(Float {
                neg: self.neg != other.neg,
                ..Self::ZERO
            });
        }
        // The dividend's significand is moved to the top of 128 bits and
        // the divisor's to bit 63 at most, so the quotient has at least 64
        // bits: enough for 53 and the rounding bits, the remainder being the
        // sticky bit.
        let a_shift = (self.mant as u128).leading_zeros();
        let b_shift = other.mant.leading_zeros();
        let a = (self.mant as u128) << a_shift;
        let b = (other.mant << b_shift) as u128;
        let q = div_u128(a, b);
        let sticky = q.wrapping_mul(b) != a;
        let exp = self
            .exp
            .saturating_sub(other.exp)
            .saturating_sub(a_shift as i32)
            .saturating_add(b_shift as i32);
        Some(round_to_precision(self.neg != other.neg, q, exp, sticky))
    }

    /// `self as u64` for a value in `0 ≤ self < 2^64` (truncated toward
    /// zero); `None` below zero (from -1 down: `-0.5 as u64` is 0) or from
    /// 2^64 up.
    pub(crate) fn trunc_u64(self) -> Option<u64> {
        let (int, _) = self.split()?;
        if self.neg && int != 0 {
            return None;
        }
        u64::try_from(int).ok()
    }

    /// `libm::round(self)` (half away from zero) as a `u64`; `None` when the
    /// rounded value is below zero or from 2^64 up.
    pub(crate) fn round_u64(self) -> Option<u64> {
        let (int, half_or_more) = self.split()?;
        let r = int.checked_add(half_or_more as u128)?;
        if self.neg && r != 0 {
            return None;
        }
        u64::try_from(r).ok()
    }

    /// `libm::round(self).clamp(i64::MIN as f64, i64::MAX as f64) as i64`.
    pub(crate) fn round_i64_saturating(self) -> i64 {
        let (int, half_or_more) = self.split().unwrap_or((u128::MAX, false));
        let r = int.saturating_add(half_or_more as u128);
        if self.neg {
            i64::try_from(r).map_or(i64::MIN, |v| -v)
        } else {
            i64::try_from(r).unwrap_or(i64::MAX)
        }
    }

    /// How `self` compares with the integer `x`, exactly (as `self` compares
    /// with `x as f64` for `|x| < 2^53`).
    pub(crate) fn cmp_i64(self, x: i64) -> Ordering {
        let Some((int, _)) = self.split() else {
            return if self.neg { Ordering::Less } else { Ordering::Greater };
        };
        let has_fraction = self.fraction_nonzero();
        let mag = |v: u128| -> Ordering {
            match v.cmp(&(x.unsigned_abs() as u128)) {
                Ordering::Equal if has_fraction => Ordering::Greater,
                o => o,
            }
        };
        match (self.is_negative(), x < 0) {
            (false, false) => mag(int),
            (true, true) => mag(int).reverse(),
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
        }
    }

    /// The magnitude's integer part and whether its fraction is at least
    /// one half; `None` when the integer part needs more than 128 bits.
    fn split(self) -> Option<(u128, bool)> {
        let m = self.mant as u128;
        if self.exp >= 0 {
            let e = u32::try_from(self.exp).ok()?;
            if e >= m.leading_zeros() && m != 0 {
                return None;
            }
            return Some((m.checked_shl(e).unwrap_or(0), false));
        }
        let s = self.exp.unsigned_abs();
        if s > 64 {
            // mant < 2^64, so the value is below one half.
            return Some((0, false));
        }
        Some((m >> s, (m >> (s - 1)) & 1 == 1))
    }

    /// Whether the magnitude has a nonzero fractional part.
    fn fraction_nonzero(self) -> bool {
        if self.exp >= 0 {
            return false;
        }
        let s = self.exp.unsigned_abs();
        s >= 64 && self.mant != 0 || s < 64 && self.mant & ((1u64 << s) - 1) != 0
    }
}

/// `-1^neg × v × 2^exp` rounded to [`PRECISION`] bits, ties to even;
/// `sticky` says the exact value is a little more than `v × 2^exp` (bits
/// below `v` that are not all zero). Subnormal results are kept at full
/// precision: no caller looks at values that small.
fn round_to_precision(neg: bool, v: u128, exp: i32, sticky: bool) -> Float {
    let bits = 128 - v.leading_zeros();
    if bits <= PRECISION {
        // Exact; `sticky` cannot be set with so few bits from a product,
        // and a quotient always has more.
        return Float {
            neg,
            mant: v as u64,
            exp,
        };
    }
    let s = bits - PRECISION;
    let mut q = v >> s;
    let rest = v & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    if rest > half || (rest == half && (sticky || q & 1 == 1)) {
        q += 1;
    }
    let (q, s) = if q >> PRECISION != 0 { (q >> 1, s + 1) } else { (q, s) };
    Float {
        neg,
        mant: q as u64,
        exp: exp.saturating_add(s as i32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: repeatable random bits without a dependency.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// A finite double of any magnitude that a header field may hold:
        /// random bits, integers, and decimal fractions.
        fn value(&mut self) -> f64 {
            let r = self.next();
            let v = match r % 4 {
                0 => f64::from_bits(self.next()),
                1 => (self.next() % 100_000_000) as f64,
                2 => (self.next() % 10_000_000) as f64 / 1000.0,
                _ => f64::from_bits((self.next() & 0x800F_FFFF_FFFF_FFFF) | (0x3FF0 + r % 0x50) << 48),
            };
            if v.is_finite() {
                v
            } else {
                1.5
            }
        }
    }

    fn f(v: f64) -> Float {
        Float::from_f64_bits(v.to_bits()).unwrap_or(Float::ZERO)
    }

    /// The value as f64, for comparing (exact within binary64's normal
    /// range, which the test values keep to).
    fn back(x: Float) -> f64 {
        let m = if x.neg { -(x.mant as f64) } else { x.mant as f64 };
        libm::ldexp(m, x.exp)
    }

    const SPECIAL: [f64; 12] = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        44100.0,
        29.97,
        1e6,
        0.49999999999999994,
        4.5e15,
    ];

    #[test]
    fn products_quotients_and_conversions_match_f64() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let ks = [
            1u64,
            3,
            1000,
            1024,
            1_000_000,
            90_000,
            1_000_000_000,
            (1 << 53) + 1,
            u64::MAX,
        ];
        for i in 0..200_000 {
            let v = if i < SPECIAL.len() { SPECIAL[i] } else { rng.value() };
            let x = f(v);
            let k = ks[i % ks.len()];
            let kf = k as f64;
            assert_eq!(back(Float::from_u64(k)), kf, "{k} as f64");
            let p = v * kf;
            if p.is_finite() && p.abs() > f64::MIN_POSITIVE {
                assert_eq!(back(x.mul(Float::from_u64(k))), p, "{v:e} * {k}");
            }
            let q = v / kf;
            if q.abs() > f64::MIN_POSITIVE {
                let got = x.div(Float::from_u64(k)).map(back);
                assert_eq!(got, Some(q), "{v:e} / {k}");
            }
            if (0.0..18_446_744_073_709_551_616.0).contains(&v) || (v < 0.0 && v > -1.0) {
                assert_eq!(x.trunc_u64(), Some(v as u64), "{v:e} as u64");
            } else {
                assert_eq!(x.trunc_u64(), None, "{v:e} as u64");
            }
            let r = libm::round(v);
            if (0.0..18_446_744_073_709_551_616.0).contains(&r) {
                assert_eq!(x.round_u64(), Some(r as u64), "round {v:e}");
            } else {
                assert_eq!(x.round_u64(), None, "round {v:e}");
            }
            assert_eq!(
                x.round_i64_saturating(),
                r.clamp(i64::MIN as f64, i64::MAX as f64) as i64,
                "round {v:e} to i64"
            );
            let t = (rng.next() % 20_000) as i64 - 10_000;
            let t = if i % 3 == 0 { v as i64 } else { t };
            if t.unsigned_abs() < 1 << 53 {
                assert_eq!(
                    x.cmp_i64(t),
                    v.partial_cmp(&(t as f64)).unwrap_or(Ordering::Equal),
                    "{v:e} vs {t}"
                );
            }
        }
    }

    #[test]
    fn narrow_and_scaled_values_match_f64() {
        let mut rng = Rng(7);
        for _ in 0..100_000 {
            let b = rng.next() as u32;
            let v = f32::from_bits(b);
            match Float::from_be_f32(b.to_be_bytes()) {
                Some(x) => assert_eq!(back(x), v as f64, "{v:e}"),
                None => assert!(!v.is_finite()),
            }
            let m = rng.next();
            let e = (rng.next() % 127) as i32 - 63;
            assert_eq!(
                back(Float::from_scaled_u64(m, e)),
                libm::ldexp(m as f64, e),
                "{m} * 2^{e}"
            );
        }
        assert_eq!(Float::from_f64_bits(f64::INFINITY.to_bits()), None);
        assert_eq!(Float::from_f64_bits(f64::NAN.to_bits()), None);
        assert_eq!(Float::from_be_f64(1.0f64.to_be_bytes()), Some(f(1.0)));
        assert_eq!(f(1.0).div(Float::ZERO), None);
        assert!(f(-1.0).is_negative() && !f(-0.0).is_negative());
    }

    #[test]
    fn values_beyond_binary64_stay_finite_and_out_of_range() {
        // f64::MAX * 10 is infinite in f64; here it is a finite value that
        // no integer conversion accepts.
        let big = f(f64::MAX).mul(Float::from_u64(10));
        assert_eq!(big.trunc_u64(), None);
        assert_eq!(big.round_u64(), None);
        assert_eq!(big.round_i64_saturating(), i64::MAX);
        assert_eq!(big.cmp_i64(i64::MAX), Ordering::Greater);
    }
}
