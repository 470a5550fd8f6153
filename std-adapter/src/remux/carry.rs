//! What `remux` carries beside the packets and the text tags: the input's
//! chapters ([`input_chapters`]) and its attached pictures as files
//! ([`input_pictures`]), for a target that stores them (Matroska; other
//! targets leave them out).

use super::PreparedTrack;
use mediaslice::mux::chapters::MuxChapter;
use mediaslice::{Codec, Demuxer, Source};

/// A chapter to write, owned: times in nanoseconds of the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarriedChapter {
    /// Matroska ChapterUID.
    pub id: u64,
    /// Start and end, in nanoseconds.
    pub start_ns: u64,
    /// End, in nanoseconds.
    pub end_ns: u64,
    /// Title, when the input gives one.
    pub title: Option<String>,
}

impl CarriedChapter {
    /// As the muxer takes it.
    pub fn as_mux(&self) -> MuxChapter<'_> {
        MuxChapter {
            id: self.id,
            start_ns: self.start_ns,
            end_ns: self.end_ns,
            title: self.title.as_deref(),
        }
    }
}

/// The chapters of the input, as `ffmpeg -c copy` carries them into
/// Matroska: the chapters `probe --json --chapters` shows (ends filled as
/// ffmpeg fills them), moved by the input's format `start_time` as
/// ffmpeg's `copy_chapters` moves them (`ffmpeg_opt.c`; the offset
/// rounded into each chapter's time base; a chapter that ends before it is
/// dropped, a start before it becomes 0; an MP3's encoder delay thus moves
/// its chapters 25 ms earlier while its packets stay), then rescaled to
/// nanoseconds; ids made non-zero as ffmpeg's Matroska muxer makes them
/// (`chapter_id_offset`: every id plus `1 - least id` when one is below
/// 1). Needs the `json` feature (the probe gives ends and start); without
/// it, no chapters.
pub fn input_chapters<S: Source>(open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>) -> Vec<CarriedChapter> {
    #[cfg(feature = "json")]
    {
        use mediaslice::types::rescale_q;
        use mediaslice::Rational;
        let Ok(mut d) = open() else { return Vec::new() };
        let (chapters, start_us) = crate::ffprobe::gather::probe_chapters(&mut d);
        let least = chapters.iter().map(|c| c.id).min().unwrap_or(1);
        let offset = (1 - least).max(0);
        let (us, ns) = (Rational::new(1, 1_000_000), Rational::new(1, 1_000_000_000));
        let mut out: Vec<CarriedChapter> = Vec::new();
        for c in chapters {
            let off = rescale_q(start_us.unwrap_or(0), us, c.time_base);
            let end = c.end.unwrap_or(c.start);
            if end < off {
                continue;
            }
            let start = rescale_q(c.start.saturating_sub(off).max(0), c.time_base, ns).max(0) as u64;
            let end = (rescale_q(end.saturating_sub(off), c.time_base, ns).max(0) as u64).max(start);
            let id = u64::try_from(c.id.saturating_add(offset)).unwrap_or(0);
            if id == 0 || out.iter().any(|o| o.id == id) {
                continue;
            }
            out.push(CarriedChapter {
                id,
                start_ns: start,
                end_ns: end,
                title: c.title,
            });
        }
        out
    }
    #[cfg(not(feature = "json"))]
    {
        let _ = open;
        Vec::new()
    }
}

/// An attached picture of the input, to be written as a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarriedPicture {
    /// The input track it was.
    pub track: usize,
    /// File name: `cover.jpg`, `cover.png` ... (Matroska's convention for
    /// cover art, as mkvmerge names it), or the name the input gives.
    pub name: String,
    /// MIME type.
    pub mime: &'static str,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// The MIME type and file extension of a picture codec.
fn picture_type(codec: Codec) -> Option<(&'static str, &'static str)> {
    match codec {
        Codec::Mjpeg => Some(("image/jpeg", "jpg")),
        Codec::Png => Some(("image/png", "png")),
        Codec::Bmp => Some(("image/bmp", "bmp")),
        Codec::Gif => Some(("image/gif", "gif")),
        Codec::Webp => Some(("image/webp", "webp")),
        _ => None,
    }
}

/// The attached pictures among `tracks` (those with
/// `track.attached_picture` and an image codec) with their one packet's
/// bytes, read from the input `open` opens within the first
/// `super::FIRST_PACKET_SEARCH` packets. The first is named `cover.EXT`,
/// the others `cover_N.EXT`, unless the input names it (a Matroska
/// attachment: the reader gives its FileName as the key of a tag whose
/// bytes are the picture's). Other attachments (fonts) are not carried.
pub fn input_pictures<S: Source>(
    open: &dyn Fn() -> mediaslice::Result<Demuxer<S>>,
    tracks: &[PreparedTrack],
) -> Vec<CarriedPicture> {
    let wanted: Vec<usize> = tracks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.track.attached_picture && picture_type(t.track.codec).is_some())
        .map(|(i, _)| i)
        .collect();
    let mut out: Vec<CarriedPicture> = Vec::new();
    if wanted.is_empty() {
        return out;
    }
    let Ok(mut d) = open() else { return out };
    let mut seen = 0usize;
    while let Ok(Some(p)) = d.next_packet() {
        seen += 1;
        if wanted.contains(&p.track) && !out.iter().any(|o| o.track == p.track) {
            let codec = tracks.get(p.track).map_or(Codec::Unknown, |t| t.track.codec);
            if let Some((mime, ext)) = picture_type(codec) {
                let name = if out.is_empty() {
                    format!("cover.{ext}")
                } else {
                    format!("cover_{}.{ext}", out.len() + 1)
                };
                out.push(CarriedPicture {
                    track: p.track,
                    name,
                    mime,
                    data: p.data.to_vec(),
                });
            }
        }
        if out.len() == wanted.len() || seen >= super::FIRST_PACKET_SEARCH {
            break;
        }
    }
    if d.format() == mediaslice::FormatKind::Matroska {
        d.rewind_tags();
        while let Ok(Some(t)) = d.next_tag() {
            if let (mediaslice::TagKey::Text(name), mediaslice::TagValue::Bytes(b)) = (t.key, t.value) {
                if let Some(p) = out.iter_mut().find(|p| p.data == b && !name.is_empty()) {
                    p.name = name.to_owned();
                }
            }
        }
    }
    out
}
