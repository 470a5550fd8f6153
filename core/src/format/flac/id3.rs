//! Just enough ID3v2 (id3.org "ID3 tag version 2.3.0" and "2.4.0 - Main
//! Structure") to skip tags in front of `fLaC` and to walk their frames as
//! tags.

use crate::error::Result;
use crate::source::Source;

/// Size of the ID3v2 header (and footer).
const HEADER: u64 = 10;

/// Decodes a 28-bit "synchsafe" integer (ID3v2.4 §6.2).
fn synchsafe(b: [u8; 4]) -> u64 {
    b.iter().fold(0u64, |v, &c| (v << 7) | (c & 0x7F) as u64)
}

/// One ID3v2 tag in the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Id3Tag {
    /// Major version (2, 3 or 4).
    pub version: u8,
    /// First byte of the first frame (after any extended header).
    pub frames: u64,
    /// End of the frame area.
    pub end: u64,
    /// First byte after the tag (and its footer).
    pub next: u64,
    /// Whether the frames can be read in place (no unsynchronisation).
    pub readable: bool,
}

/// Reads the ID3v2 tag header at `at`, or `None` when there is none.
///
/// Errors: a read error of the source.
pub fn read_tag<S: Source>(src: &mut S, at: u64) -> Result<Option<Id3Tag>> {
    let mut h = [0u8; 10];
    if src.read_at(at, &mut h)? < 10 || &h[..3] != b"ID3" || h[3] == 0xFF || h[4] == 0xFF {
        return Ok(None);
    }
    if h[6..10].iter().any(|&c| c & 0x80 != 0) {
        return Ok(None);
    }
    let size = synchsafe([h[6], h[7], h[8], h[9]]);
    let flags = h[5];
    let end = at + HEADER + size;
    let footer = if h[3] >= 4 && flags & 0x10 != 0 { HEADER } else { 0 };
    let mut frames = at + HEADER;
    if flags & 0x40 != 0 && h[3] >= 3 {
        // Extended header: its size excludes itself in 2.3, includes it in 2.4.
        let b: [u8; 4] = src.array(frames).unwrap_or([0; 4]);
        frames += if h[3] == 3 {
            u32::from_be_bytes(b) as u64 + 4
        } else {
            synchsafe(b)
        };
    }
    Ok(Some(Id3Tag {
        version: h[3],
        frames: frames.min(end),
        end,
        next: end + footer,
        readable: flags & 0x80 == 0 && h[3] >= 2,
    }))
}

/// One frame: its id (3 or 4 characters, right-padded with NUL) and the
/// range of its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Id3Frame {
    /// The frame id.
    pub id: [u8; 4],
    /// Body offset.
    pub body: u64,
    /// Body length.
    pub len: u32,
}

/// Reads the frame at `*pos` and advances `*pos`; `None` at padding or the
/// end of the tag.
///
/// Errors: a read error of the source.
pub fn next_frame<S: Source>(src: &mut S, tag: &Id3Tag, pos: &mut u64) -> Result<Option<Id3Frame>> {
    let (hlen, idlen) = if tag.version == 2 { (6u64, 3usize) } else { (10, 4) };
    if pos.saturating_add(hlen) > tag.end {
        return Ok(None);
    }
    let mut h = [0u8; 10];
    src.read_exact_at(*pos, h.get_mut(..hlen as usize).unwrap_or(&mut []))?;
    let mut id = [0u8; 4];
    for (d, s) in id.iter_mut().zip(h.iter()).take(idlen) {
        *d = *s;
    }
    if !id
        .iter()
        .take(idlen)
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
    {
        return Ok(None);
    }
    let len = match tag.version {
        2 => u32::from_be_bytes([0, h[3], h[4], h[5]]) as u64,
        3 => u32::from_be_bytes([h[4], h[5], h[6], h[7]]) as u64,
        _ => synchsafe([h[4], h[5], h[6], h[7]]),
    };
    let body = *pos + hlen;
    if body.saturating_add(len) > tag.end {
        return Ok(None);
    }
    *pos = body + len;
    Ok(Some(Id3Frame {
        id,
        body,
        len: len as u32,
    }))
}

/// ffprobe's names for the common text frames (ffmpeg's `ff_id3v2_34_metadata_conv`).
pub fn frame_name(id: &[u8; 4]) -> Option<&'static str> {
    Some(match id {
        b"TALB" | b"TAL\0" => "album",
        b"TCOM" | b"TCM\0" => "composer",
        b"TCON" | b"TCO\0" => "genre",
        b"TCOP" | b"TCR\0" => "copyright",
        b"TENC" | b"TEN\0" => "encoded_by",
        b"TIT2" | b"TT2\0" => "title",
        b"TLAN" | b"TLA\0" => "language",
        b"TPE1" | b"TP1\0" => "artist",
        b"TPE2" | b"TP2\0" => "album_artist",
        b"TPE3" | b"TP3\0" => "performer",
        b"TPOS" | b"TPA\0" => "disc",
        b"TPUB" | b"TPB\0" => "publisher",
        b"TRCK" | b"TRK\0" => "track",
        b"TSSE" | b"TSS\0" => "encoder",
        b"TDRC" | b"TYER" | b"TYE\0" => "date",
        b"COMM" | b"COM\0" => "comment",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SliceSource;

    #[test]
    fn reads_frames() {
        let mut b = [0u8; 40];
        b[..10].copy_from_slice(b"ID3\x03\0\0\0\0\0\x1e");
        b[10..20].copy_from_slice(b"TIT2\0\0\0\x04\0\0");
        b[20..24].copy_from_slice(b"\0abc");
        let mut src = SliceSource::new(&b);
        let t = read_tag(&mut src, 0).unwrap().unwrap();
        assert_eq!((t.frames, t.end, t.next), (10, 40, 40));
        let mut pos = t.frames;
        let f = next_frame(&mut src, &t, &mut pos).unwrap().unwrap();
        assert_eq!((&f.id, f.body, f.len), (b"TIT2", 20, 4));
        assert_eq!(frame_name(&f.id), Some("title"));
        assert!(next_frame(&mut src, &t, &mut pos).unwrap().is_none());
        assert!(read_tag(&mut src, 1).unwrap().is_none());
    }
}
