//! Tag editing: `mediaslice tags IN --set title=X --remove comment [-o OUT]`
//! as a library.
//!
//! [`edit`] reads the file's tag block, applies [`Edits`], and writes the
//! result either **in place** (only the tag bytes are rewritten, when the
//! new tag fits the old one plus its padding) or by a **streaming copy**:
//! a new file is written under a temporary name beside the target (new tag
//! bytes, then the rest of the input handed to the kernel with
//! `copy_file_range`, memory constant) and renamed over the target at the
//! end. Every check of the input runs before the first byte is written, so
//! a malformed tag block is an error and the file is left as it was.
//!
//! One file per format (`flac`, `mp3` with `id3v2` and `id3v1`, `mp4`
//! with `mp4_ilst`, `mp4_box`, `mp4_offsets` and `mp4_skeleton`, `wav`, `aiff` with
//! `id3v2`, both walking chunks with `iff`, `mkv` with `ebml`,
//! `mkv_layout`, `mkv_tags`, `mkv_seek` and `mkv_shift`, `ogg`, `asf` with
//! `asf_attrs`);
//! [`plan`] is what a format hands back (positioned writes or the pieces of
//! a copy) and `output` carries it out. See `docs/tags.md`.

mod aiff;
mod asf;
mod asf_attrs;
mod base64;
mod ebml;
mod flac;
mod id3v1;
mod id3v2;
mod iff;
mod mkv;
mod mkv_attach;
mod mkv_layout;
mod mkv_seek;
mod mkv_shift;
mod mkv_tags;
mod mp3;
mod mp4;
mod mp4_box;
mod mp4_ilst;
mod mp4_offsets;
mod mp4_skeleton;
mod ogg;

mod output;
mod picture;
pub mod plan;
mod wav;

use mediaslice::FormatKind;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

pub use picture::{Picture, PictureKind, MAX_PICTURE};
pub use plan::Plan;

/// The changes asked for: fields to set and fields to remove. A name is a
/// common name (`title`, `artist`, `album`, `date`, `genre`, `comment`,
/// `track`, `album_artist`), mapped to each format's own key, or any other
/// key, written as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Edits {
    /// `(name, value)` pairs, applied in order; a later pair of the same
    /// name wins.
    pub set: Vec<(String, String)>,
    /// Names whose every value is removed.
    pub remove: Vec<String>,
    /// A front cover to embed: it replaces every front-cover picture (FLAC
    /// PICTURE type 3, ID3v2 APIC type 3, the MP4 `covr` item, an Ogg
    /// `METADATA_BLOCK_PICTURE` comment of type 3).
    pub picture: Option<Picture>,
    /// Remove every embedded picture (FLAC PICTURE blocks, APIC frames,
    /// `covr`, Ogg `METADATA_BLOCK_PICTURE` comments), before `picture` is
    /// added.
    pub remove_picture: bool,
}

impl Edits {
    /// True when nothing is to change.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.remove.is_empty() && self.picture.is_none() && !self.remove_picture
    }

    /// True when text fields are set or removed (not only pictures).
    pub fn touches_fields(&self) -> bool {
        !self.set.is_empty() || !self.remove.is_empty()
    }

    /// True when pictures change.
    pub fn touches_pictures(&self) -> bool {
        self.picture.is_some() || self.remove_picture
    }

    /// Adds `NAME=VALUE` (as given on the command line) to the fields to
    /// set. Errors: `InvalidInput` without a `=` or with an empty name.
    pub fn push_set(&mut self, arg: &str) -> io::Result<()> {
        match arg.split_once('=') {
            Some((name, value)) if !name.is_empty() => {
                self.set.push((name.to_string(), value.to_string()));
                Ok(())
            }
            _ => Err(invalid_input(format!("--set {arg}: expected NAME=VALUE"))),
        }
    }

    /// The value to set for `name` (the last one given), compared without
    /// regard to ASCII case.
    pub fn value_of(&self, name: &str) -> Option<&str> {
        self.set
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every name touched (set or removed), once each, in the order given.
    pub fn touched(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for n in self
            .set
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(self.remove.iter().map(String::as_str))
        {
            if !out.iter().any(|o| o.eq_ignore_ascii_case(n)) {
                out.push(n);
            }
        }
        out
    }
}

/// How the edit was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditMode {
    /// Only the tag region of the file was rewritten; its length is
    /// unchanged.
    InPlace,
    /// A new file was written beside the target and renamed over it.
    Copy,
    /// Tag bytes rewritten in place and the new tag written at the end:
    /// the file grew (Matroska Tags moved to the end of the Segment).
    Extended,
}

/// What [`edit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditReport {
    /// The format edited (`flac`, `mp3`, `mp4`, `wav`, `rf64`, `aiff`,
    /// `matroska`, `ogg`, `asf`).
    pub format: &'static str,
    /// In place or by a copy.
    pub mode: EditMode,
    /// Bytes written: the tag bytes in place (and the appended tag), the
    /// whole new file for a copy.
    pub bytes_written: u64,
    /// The file written (the input when there was no output path).
    pub output: PathBuf,
}

/// Applies `edits` to the tags of the file at `path`. With `output` (and
/// not the same file as `path`), the input is only read and the result is
/// written to `output` by a streaming copy; otherwise the input is edited,
/// in place when the new tag fits, else by a copy renamed over it.
///
/// Supported: native FLAC (Vorbis comment), MP3 (ID3v2.3/2.4, written as
/// 2.4, and ID3v1), MP4/M4A/MOV/3GP (`moov/udta/meta/ilst`), WAV and
/// RF64/BW64 (`LIST`/`INFO`), Matroska/WebM (Info Title, file-level Tags), Ogg
/// Vorbis and Opus (the comment header; always a copy), AIFF/AIFF-C (the
/// `ID3 ` chunk, text chunks kept in step), ASF/WMA/WMV (the Header
/// Object's Content Description, Extended Content Description and
/// Metadata objects).
///
/// Errors: `Unsupported` for another format; `InvalidData` for a malformed
/// tag block or one this editor cannot rewrite (the message names the
/// format and the field), with the file untouched; the I/O error of a
/// read, a write or the rename (the input intact, no file under the
/// output's name).
pub fn edit(path: &Path, edits: &Edits, output: Option<&Path>) -> io::Result<EditReport> {
    let file = crate::open_regular_file(path)?;
    let output = output.filter(|o| !same_file(path, o));
    let in_place_ok = output.is_none();
    let (format, plan) = match detect(&file, path)? {
        Some(FormatKind::Flac) => ("flac", flac::plan(&file, edits, in_place_ok)?),
        Some(FormatKind::Mp3) => ("mp3", mp3::plan(&file, edits, in_place_ok)?),
        Some(FormatKind::Mp4) => ("mp4", mp4::plan(&file, edits, in_place_ok)?),
        Some(FormatKind::Aiff) => ("aiff", aiff::plan(&file, edits, in_place_ok)?),
        Some(FormatKind::Wav | FormatKind::Rf64) if edits.touches_pictures() => {
            // Never a silent no-op: the picture edit is refused, and the
            // text edits given with it are not made either.
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "tag editing: WAV has no picture field here (FLAC, MP3, MP4, AIFF, Matroska and Ogg Vorbis/Opus do)",
            ));
        }
        Some(FormatKind::Wav) => ("wav", wav::plan(&file, edits, in_place_ok)?),
        Some(FormatKind::Rf64) => ("rf64", wav::plan(&file, edits, in_place_ok)?),
        Some(FormatKind::Matroska) => ("matroska", mkv::plan(&file, edits, in_place_ok)?),
        Some(FormatKind::Ogg) => ("ogg", ogg::plan(&file, edits)?),
        Some(FormatKind::Asf) => ("asf", asf::plan(&file, edits, in_place_ok)?),

        Some(other) => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("tag editing: {other:?} is not supported yet (FLAC, MP3, MP4, WAV, RF64, AIFF, Matroska/WebM, Ogg Vorbis/Opus and ASF are)"),
            ))
        }
        None => {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "tag editing: unknown format",
            ))
        }
    };
    let target = output.unwrap_or(path);
    let (mode, bytes_written) = output::carry_out(&file, path, target, plan)?;
    Ok(EditReport {
        format,
        mode,
        bytes_written,
        output: target.to_path_buf(),
    })
}

/// The format of `file`, by mediaslice's own detection (the extension of
/// `path` as a hint).
fn detect(file: &File, path: &Path) -> io::Result<Option<FormatKind>> {
    let mut src = crate::FileSource::from_file(file.try_clone()?)?;
    let ext = path.extension().and_then(|e| e.to_str());
    mediaslice::detect::detect_source(&mut src, ext, &mediaslice::Limits::default())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))
}

/// True when `a` and `b` name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn invalid_input(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// A malformed or unrewritable tag block: `InvalidData` with `msg`.
pub(crate) fn malformed(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// Reads `len` bytes at `pos`; `InvalidData` naming `what` when the file
/// ends first (checked before the buffer is made, so a hostile length
/// allocates nothing).
pub(crate) fn read_at(file: &File, pos: u64, len: usize, what: &str) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file_len = file.metadata()?.len();
    if pos.checked_add(len as u64).is_none_or(|end| end > file_len) {
        return Err(malformed(format!("{what}: runs past the end of the file")));
    }
    let mut buf = vec![0u8; len];
    file.read_exact_at(&mut buf, pos).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => malformed(format!("{what}: runs past the end of the file")),
        _ => e,
    })?;
    Ok(buf)
}
