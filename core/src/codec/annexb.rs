//! Annex B byte streams (ITU-T H.264 Annex B, H.265 Annex B): start codes
//! and the NAL units between them.

/// Finds the next three-byte start code prefix `00 00 01` in `data` at or
/// after `from`. Returns the offset of its first byte.
pub fn find_start_code(data: &[u8], from: usize) -> Option<usize> {
    let rest = data.get(from..)?;
    let mut i = 0usize;
    while i + 3 <= rest.len() {
        // Skip ahead quickly: the third byte must be 0 or 1 for a start
        // code to begin at i or i+1.
        match rest.get(i + 2).copied() {
            Some(1) if rest.get(i) == Some(&0) && rest.get(i + 1) == Some(&0) => return Some(from + i),
            Some(0) | Some(1) => i += 1,
            _ => i += 3,
        }
    }
    None
}

/// Iterates over the NAL units of an Annex B byte range: each item is the
/// NAL unit from its header on, without the start code and without the
/// trailing zero bytes that belong to the next start code.
#[derive(Debug, Clone)]
pub struct NalUnits<'a> {
    data: &'a [u8],
    next: Option<usize>,
}

impl<'a> NalUnits<'a> {
    /// NAL units in `data`; bytes before the first start code are ignored.
    pub fn new(data: &'a [u8]) -> Self {
        NalUnits {
            data,
            next: find_start_code(data, 0),
        }
    }
}

impl<'a> Iterator for NalUnits<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let sc = self.next?;
        let start = sc + 3;
        let following = find_start_code(self.data, start);
        self.next = following;
        let mut end = following.unwrap_or(self.data.len());
        while end > start && self.data.get(end - 1) == Some(&0) {
            end -= 1;
        }
        self.data.get(start..end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_nal_units() {
        let d = [0, 0, 0, 1, 0x67, 1, 2, 0, 0, 1, 0x68, 3, 0, 0, 0, 1, 0x65, 4];
        let mut it = NalUnits::new(&d);
        assert_eq!(it.next(), Some(&[0x67, 1, 2][..]));
        assert_eq!(it.next(), Some(&[0x68, 3][..]));
        assert_eq!(it.next(), Some(&[0x65, 4][..]));
        assert_eq!(it.next(), None);
        assert_eq!(find_start_code(&[1, 0, 0, 0, 1], 0), Some(2));
        assert_eq!(find_start_code(&[0, 0, 2, 0, 0], 0), None);
    }
}
