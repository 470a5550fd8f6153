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

/// The picture type (the first field of a FLAC PICTURE block, RFC 9639
/// §8.8) of the base64 `text`, decoded with the core's decoder; `None` when
/// its first characters are not base64 or are too few.
pub(super) fn picture_type(text: &[u8]) -> Option<u32> {
    let mut b = [0u8; 7];
    let n = mediaslice::format::xiph::base64::decode(text.get(..text.len().min(8))?, &mut b)?;
    let t: [u8; 4] = b.get(..4)?.try_into().ok()?;
    (n >= 4).then_some(u32::from_be_bytes(t))
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
        }
        let all: Vec<u8> = (0..=255).collect();
        let mut back = [0u8; 257];
        let n = mediaslice::format::xiph::base64::decode(&encode(&all), &mut back).unwrap();
        assert_eq!(&back[..n], &all[..]);
    }

    #[test]
    fn picture_types() {
        assert_eq!(picture_type(&encode(&[0, 0, 0, 3, 0, 0, 0, 9])), Some(3));
        assert_eq!(picture_type(b"AAAAAw=="), Some(3));
        assert_eq!(picture_type(b"AAAA"), None);
        assert_eq!(picture_type(b"AA!AAw=="), None);
    }
}
