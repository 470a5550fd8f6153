//! AV1 bitstream pieces (AV1 Bitstream & Decoding Process Specification):
//! `leb128()` (§4.10.5), OBU headers (§5.3), the sequence header's picture
//! size and `reduced_still_picture_header` (§5.5), and the frame type at the
//! start of an uncompressed frame header (§5.9.2).

use super::bits::BitReader;

/// OBU types (§6.2.2).
pub mod obu {
    /// Sequence header.
    pub const SEQUENCE_HEADER: u8 = 1;
    /// Temporal delimiter.
    pub const TEMPORAL_DELIMITER: u8 = 2;
    /// Frame header.
    pub const FRAME_HEADER: u8 = 3;
    /// Tile group.
    pub const TILE_GROUP: u8 = 4;
    /// Metadata.
    pub const METADATA: u8 = 5;
    /// Frame (header and tile group).
    pub const FRAME: u8 = 6;
    /// Redundant frame header.
    pub const REDUNDANT_FRAME_HEADER: u8 = 7;
    /// Tile list.
    pub const TILE_LIST: u8 = 8;
    /// Padding.
    pub const PADDING: u8 = 15;
}

/// Reads a `leb128()` value (§4.10.5) from the start of `b`: the value and
/// the bytes it took, at most 8. `None` when cut short or over 2^32 - 1.
pub fn leb128(b: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for i in 0..8 {
        let byte = *b.get(i)?;
        v |= ((byte & 0x7F) as u64) << (7 * i);
        if byte & 0x80 == 0 {
            return (v <= u32::MAX as u64).then_some((v, i + 1));
        }
    }
    None
}

/// Writes `v` as a minimal `leb128()` into `out`; returns the bytes used.
pub fn write_leb128(mut v: u64, out: &mut [u8; 8]) -> usize {
    let mut n = 0;
    loop {
        let byte = (v & 0x7F) as u8;
        v >>= 7;
        if let Some(o) = out.get_mut(n) {
            *o = if v != 0 { byte | 0x80 } else { byte };
        }
        n += 1;
        if v == 0 || n == 8 {
            return n;
        }
    }
}

/// An OBU header (§5.3.1–5.3.3) and, when present, its size field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObuHeader {
    /// `obu_type`.
    pub obu_type: u8,
    /// Whether the extension byte is present.
    pub extension: bool,
    /// `temporal_id` and `spatial_id` from the extension byte.
    pub ids: (u8, u8),
    /// `obu_size` when `obu_has_size_field` is set.
    pub size: Option<u64>,
    /// Bytes of header, extension and size field.
    pub header_len: usize,
}

impl ObuHeader {
    /// Parses the OBU header at the start of `b`. `None` when the forbidden
    /// bit is set or the bytes are cut short.
    pub fn parse(b: &[u8]) -> Option<Self> {
        let h = *b.first()?;
        if h & 0x80 != 0 {
            return None;
        }
        let extension = h & 0x04 != 0;
        let has_size = h & 0x02 != 0;
        let mut at = 1;
        let mut ids = (0, 0);
        if extension {
            let e = *b.get(1)?;
            ids = (e >> 5, (e >> 3) & 3);
            at = 2;
        }
        let size = if has_size {
            let (v, n) = leb128(b.get(at..)?)?;
            at += n;
            Some(v)
        } else {
            None
        };
        Some(ObuHeader {
            obu_type: (h >> 3) & 0xF,
            extension,
            ids,
            size,
            header_len: at,
        })
    }
}

/// What a sequence header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SequenceHeader {
    /// `seq_profile`.
    pub profile: u8,
    /// `reduced_still_picture_header`.
    pub reduced_still_picture_header: bool,
    /// `max_frame_width_minus_1 + 1`.
    pub width: u32,
    /// `max_frame_height_minus_1 + 1`.
    pub height: u32,
    /// `num_units_in_display_tick` and `time_scale`, when given.
    pub timing: Option<(u32, u32)>,
}

fn uvlc(r: &mut BitReader<'_>) -> u32 {
    let mut zeros = 0;
    while !r.bit() {
        zeros += 1;
        if zeros >= 32 || r.overrun() {
            return u32::MAX;
        }
    }
    ((1u64 << zeros) - 1 + r.bits(zeros) as u64).min(u32::MAX as u64) as u32
}

/// What a sequence header says of its pictures beyond their size: the
/// first operating point's level and the `color_config()` (§5.5.2).
/// Read for a probe's stream facts; the demuxers never need it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SequenceColor {
    /// `seq_level_idx[0]`.
    pub level: u8,
    /// `BitDepth`: 8, 10 or 12.
    pub bit_depth: u8,
    /// `mono_chrome`.
    pub mono: bool,
    /// `subsampling_x` and `subsampling_y`.
    pub subsampling: (bool, bool),
}

impl SequenceHeader {
    /// Parses a sequence header OBU payload (after the OBU header), §5.5.
    pub fn parse(payload: &[u8]) -> Option<Self> {
        Self::parse_with::<false>(payload).map(|(s, _)| s)
    }

    /// Parses a sequence header OBU payload with its level and colour
    /// configuration.
    pub fn parse_color(payload: &[u8]) -> Option<(Self, SequenceColor)> {
        Self::parse_with::<true>(payload)
    }

    /// One walk for both: with `COLOR` false the colour fields are not
    /// read, and the code that reads them is not in the demuxers.
    fn parse_with<const COLOR: bool>(payload: &[u8]) -> Option<(Self, SequenceColor)> {
        let mut r = BitReader::new(payload);
        let mut c = SequenceColor::default();
        let mut s = SequenceHeader {
            profile: r.bits(3) as u8,
            ..SequenceHeader::default()
        };
        r.skip(1); // still_picture
        s.reduced_still_picture_header = r.bit();
        if s.reduced_still_picture_header {
            c.level = r.bits(5) as u8;
        } else {
            let mut decoder_model = false;
            let mut buffer_delay_len = 0;
            if r.bit() {
                let units = r.bits(32);
                let scale = r.bits(32);
                if units > 0 && scale > 0 {
                    s.timing = Some((units, scale));
                }
                if r.bit() {
                    uvlc(&mut r);
                }
                decoder_model = r.bit();
                if decoder_model {
                    buffer_delay_len = r.bits(5) + 1;
                    r.skip(32 + 5 + 5);
                }
            }
            let initial_display_delay = r.bit();
            let ops = r.bits(5) + 1;
            for i in 0..ops {
                r.skip(12);
                let level = r.bits(5);
                if COLOR && i == 0 {
                    c.level = level as u8;
                }
                if level > 7 {
                    r.skip(1);
                }
                if decoder_model && r.bit() {
                    r.skip(buffer_delay_len * 2 + 1);
                }
                if initial_display_delay && r.bit() {
                    r.skip(4);
                }
            }
        }
        let wb = r.bits(4) + 1;
        let hb = r.bits(4) + 1;
        s.width = r.bits(wb).saturating_add(1);
        s.height = r.bits(hb).saturating_add(1);
        if COLOR {
            c = color_config(&mut r, &s, c);
        }
        (!r.overrun()).then_some((s, c))
    }
}

/// The rest of a sequence header after the frame size, up to and through
/// `color_config()` (§5.5.1, §5.5.2).
fn color_config(r: &mut BitReader<'_>, s: &SequenceHeader, mut c: SequenceColor) -> SequenceColor {
    let reduced = s.reduced_still_picture_header;
    if !reduced && r.bit() {
        r.skip(4 + 3); // frame id lengths
    }
    r.skip(3); // use_128x128_superblock, enable_filter_intra, enable_intra_edge_filter
    if !reduced {
        r.skip(4); // interintra, masked compound, warped motion, dual filter
        let order_hint = r.bit();
        if order_hint {
            r.skip(2); // jnt_comp, ref_frame_mvs
        }
        let force_screen_content = if r.bit() { 2 } else { r.bits(1) };
        if force_screen_content > 0 && !r.bit() {
            r.skip(1); // seq_force_integer_mv
        }
        if order_hint {
            r.skip(3);
        }
    }
    r.skip(3); // superres, cdef, restoration
    let high = r.bit();
    c.bit_depth = match (s.profile, high) {
        (2, true) if r.bit() => 12,
        (_, true) => 10,
        _ => 8,
    };
    c.mono = s.profile != 1 && r.bit();
    let (mut primaries, mut transfer, mut matrix) = (2, 2, 2);
    if r.bit() {
        (primaries, transfer, matrix) = (r.bits(8), r.bits(8), r.bits(8));
    }
    c.subsampling = if c.mono {
        (true, true)
    } else if (primaries, transfer, matrix) == (1, 13, 0) {
        (false, false)
    } else {
        r.skip(1); // color_range
        match s.profile {
            0 => (true, true),
            1 => (false, false),
            _ if c.bit_depth == 12 => {
                let x = r.bit();
                (x, x && r.bit())
            }
            _ => (true, false),
        }
    };
    c
}

/// Whether a frame header (the payload of an `OBU_FRAME` or
/// `OBU_FRAME_HEADER`) codes a key frame that is shown or a
/// `show_existing_frame` of one cannot be told here: returns
/// `Some(true)` for `frame_type == KEY_FRAME` (§5.9.2), `Some(false)` for
/// other frame types and shown existing frames.
pub fn is_key_frame(payload: &[u8], seq: &SequenceHeader) -> Option<bool> {
    if seq.reduced_still_picture_header {
        return Some(true);
    }
    let mut r = BitReader::new(payload);
    if r.bit() {
        return Some(false);
    }
    let t = r.bits(2);
    (!r.overrun()).then_some(t == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leb128_round_trip() {
        assert_eq!(leb128(&[0x95, 0x63]), Some((0x63 * 128 + 0x15, 2)));
        assert_eq!(leb128(&[0x86, 0x80, 0x80, 0x80, 0x80, 0x00]), Some((6, 6)));
        let mut o = [0u8; 8];
        assert_eq!(write_leb128(12691, &mut o), 2);
        assert_eq!(leb128(&o), Some((12691, 2)));
    }

    #[test]
    fn obu_header_and_sequence() {
        let h = ObuHeader::parse(&[0x12, 0x00]).unwrap();
        assert_eq!(
            (h.obu_type, h.size, h.header_len),
            (obu::TEMPORAL_DELIMITER, Some(0), 2)
        );
        // Profile 0, reduced still picture, level 0, 8-bit sizes 160x120.
        // 000 0 1 00000 0111 0111 10011111 01110111
        let p = [0x08, 0x1D, 0xE7, 0xDD, 0xC0];
        let s = SequenceHeader::parse(&p).unwrap();
        assert!(s.reduced_still_picture_header);
        assert_eq!((s.width, s.height), (160, 120));
    }
}
