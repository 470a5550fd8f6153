//! Base64 decoding with the standard alphabet (RFC 4648 §4), streamed: how
//! a Vorbis comment carries a FLAC PICTURE block (the
//! `METADATA_BLOCK_PICTURE` convention of the Xiph wiki's VorbisComment
//! page). No allocation: the text is fed in pieces of any size and each
//! piece's bytes are written to the caller's buffer.

/// The value of base64 character `c`, or `None` outside the alphabet.
const fn value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// A base64 decoder over text fed in pieces. Decoding ends at the first
/// `=` (padding; what follows is ignored, as ffmpeg's `av_base64_decode`
/// does); any other character outside the alphabet makes the text invalid.
/// Missing padding is accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Base64Decoder {
    /// Bits not yet written, in the low `bits` bits.
    acc: u32,
    /// How many bits `acc` holds (0 to 6 between characters).
    bits: u8,
    /// A `=` was seen: the rest of the text is ignored.
    ended: bool,
}

impl Base64Decoder {
    /// A decoder at the start of a text.
    pub const fn new() -> Self {
        Base64Decoder {
            acc: 0,
            bits: 0,
            ended: false,
        }
    }

    /// Decodes the next piece of text into `out`, which must hold
    /// `text.len() * 3 / 4 + 1` bytes. Returns the bytes written, or `None`
    /// when `text` holds a character outside the alphabet (before any `=`)
    /// or `out` is too small.
    pub fn feed(&mut self, text: &[u8], out: &mut [u8]) -> Option<usize> {
        let mut n = 0usize;
        for &c in text {
            if self.ended {
                break;
            }
            if c == b'=' {
                self.ended = true;
                break;
            }
            self.acc = (self.acc << 6 | u32::from(value(c)?)) & 0x3FFF;
            self.bits += 6;
            if self.bits >= 8 {
                self.bits -= 8;
                *out.get_mut(n)? = (self.acc >> self.bits) as u8;
                n += 1;
            }
        }
        Some(n)
    }
}

/// Decodes all of `text` into `out`; the bytes written, or `None` as
/// [`Base64Decoder::feed`].
pub fn decode(text: &[u8], out: &mut [u8]) -> Option<usize> {
    Base64Decoder::new().feed(text, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_section_10_vectors() {
        // RFC 4648 §10: the encodings of the prefixes of "foobar".
        let coded = ["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"];
        for (len, coded) in coded.into_iter().enumerate() {
            let plain = &"foobar"[..len];
            let mut out = [0u8; 8];
            let n = decode(coded.as_bytes(), &mut out).unwrap();
            assert_eq!(&out[..n], plain.as_bytes(), "{coded}");
            // The same text fed a character at a time.
            let mut d = Base64Decoder::new();
            let mut got = [0u8; 8];
            let mut at = 0;
            for c in coded.as_bytes() {
                at += d.feed(core::slice::from_ref(c), &mut got[at..]).unwrap();
            }
            assert_eq!(&got[..at], plain.as_bytes());
        }
        let mut out = [0u8; 8];
        assert_eq!(decode(b"Zm9v", &mut out), Some(3), "no padding");
        assert_eq!(decode(b"Zg==garbage!", &mut out), Some(1), "after padding");
        assert_eq!(decode(b"Z!9v", &mut out), None);
        assert_eq!(decode(b"Zm9 v", &mut out), None);
        assert_eq!(decode(b"Zm9vYmFy", &mut out[..5]), None, "out too small");
    }
}
