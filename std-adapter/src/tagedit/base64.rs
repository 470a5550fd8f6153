//! Base64 with the standard alphabet and `=` padding (RFC 4648 §4): how a
//! Vorbis comment carries a FLAC PICTURE block (the
//! `METADATA_BLOCK_PICTURE` convention of the Xiph wiki's VorbisComment
//! page).

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `data` in base64, padded to a multiple of 4 characters.
pub(super) fn encode(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            out.push(if i <= chunk.len() {
                ALPHABET[(n >> shift & 63) as usize]
            } else {
                b'='
            });
        }
    }
    out
}

/// The first `n` bytes that `text` decodes to, or `None` when its first
/// characters are not base64 or decode to fewer bytes.
pub(super) fn decode_prefix(text: &[u8], n: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(n + 2);
    for quad in text.chunks(4) {
        if out.len() >= n {
            break;
        }
        let mut acc = 0u32;
        let mut bits = 0usize;
        for &c in quad {
            if c == b'=' {
                break;
            }
            let v = ALPHABET.iter().position(|&a| a == c)?;
            acc = acc << 6 | v as u32;
            bits += 6;
        }
        let bytes = bits / 8;
        acc >>= bits % 8;
        for k in (0..bytes).rev() {
            out.push((acc >> (8 * k)) as u8);
        }
        if bytes < 3 {
            break;
        }
    }
    out.truncate(n);
    (out.len() == n).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_section_10_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(encode(plain.as_bytes()), coded.as_bytes());
            assert_eq!(
                decode_prefix(coded.as_bytes(), plain.len()).as_deref(),
                Some(plain.as_bytes())
            );
        }
        assert_eq!(decode_prefix(b"Zm9vYmFy", 4).as_deref(), Some(&b"foob"[..]));
        assert_eq!(decode_prefix(b"Zg==", 2), None);
        assert_eq!(decode_prefix(b"Z!9v", 1), None);
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode_prefix(&encode(&all), 256), Some(all));
    }
}
