//! The EA IFF 85 chunk layout, the form types this reader knows, and the
//! walk over a `FORM`'s chunks that gathers what the demuxer needs.

use crate::error::{Error, Result};
use crate::signature::IFF_FORM_TYPES;
use crate::source::Source;
use zerocopy::big_endian::U32;
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

/// A chunk header (EA IFF 85 §"Chunks"): id and the size of the data
/// after it, not counting the pad byte of an odd size.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned, Debug, Clone, Copy)]
#[repr(C)]
pub struct ChunkHeader {
    /// The chunk id (four ASCII characters).
    pub id: [u8; 4],
    /// Bytes of data.
    pub size: U32,
}

/// Bytes of [`ChunkHeader`].
pub(crate) const HEADER: u64 = 8;
/// Where the first chunk inside `FORM` is (after its header and form type).
pub(crate) const FIRST_CHUNK: u64 = 12;
/// Most chunks walked: a bound on the work for a file of empty chunks.
pub(crate) const MAX_CHUNKS: u32 = 4096;

/// The form type at offset 8 (`FORM` size type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormType {
    /// Interleaved bitplanes.
    Ilbm,
    /// Deluxe Paint chunky pixels (`PBM `).
    Pbm,
    /// Contiguous bitplanes.
    Acbm,
    /// TV Paint deep pictures.
    Deep,
    /// Impulse 24-bit run-length pictures.
    Rgb8,
    /// Impulse 12-bit run-length pictures.
    Rgbn,
    /// Animations (not read).
    Anim,
    /// 8-bit sampled voice.
    Svx8,
    /// 16-bit sampled voice.
    Sv16,
    /// MacroSystem audio (not read).
    Maud,
}

impl FormType {
    /// The form type named by `id`, when ffmpeg's `iff` demuxer takes it
    /// ([`IFF_FORM_TYPES`], in the same order).
    pub fn from_id(id: &[u8; 4]) -> Option<Self> {
        const TYPES: [FormType; 10] = [
            FormType::Ilbm,
            FormType::Pbm,
            FormType::Acbm,
            FormType::Deep,
            FormType::Rgb8,
            FormType::Rgbn,
            FormType::Anim,
            FormType::Svx8,
            FormType::Sv16,
            FormType::Maud,
        ];
        let i = IFF_FORM_TYPES.iter().position(|t| t == id)?;
        TYPES.get(i).copied()
    }
}

/// One chunk of the walk: its id, where its data starts, its size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chunk {
    pub id: [u8; 4],
    pub data: u64,
    pub size: u64,
}

/// Walks chunks from `pos`: the chunk there, and where the next one
/// starts. `None` once fewer than a header's bytes are left (ffmpeg reads
/// chunks to the end of the file, past the `FORM` size, and so does this).
pub(crate) fn next_chunk<S: Source>(src: &mut S, pos: u64) -> Result<Option<(Chunk, u64)>> {
    if pos.saturating_add(HEADER) > src.len() {
        return Ok(None);
    }
    let h: ChunkHeader = src.read(pos)?;
    let size = u64::from(h.size.get());
    let data = pos + HEADER;
    let next = data.saturating_add(size).saturating_add(size & 1);
    Ok(Some((Chunk { id: h.id, data, size }, next)))
}

/// The form type of the file, checked.
///
/// Errors: `Malformed` when the input is no `FORM`, `Unsupported` for a
/// form type this reader does not take.
pub(crate) fn form_type<S: Source>(src: &mut S) -> Result<FormType> {
    let head: [u8; 12] = src.array(0)?;
    let (magic, rest) = head.split_at(4);
    if magic != b"FORM" {
        return Err(Error::malformed(0, &"iff: no FORM (EA IFF 85: FORM)"));
    }
    let id = rest
        .get(4..8)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .unwrap_or_default();
    FormType::from_id(&id).ok_or(Error::unsupported(8, &"iff: a form type this reader does not take"))
}
