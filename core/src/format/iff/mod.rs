//! IFF: EA IFF 85 `FORM` files ("EA IFF 85 Standard for Interchange Format
//! Files", Electronic Arts, 1985) holding one Amiga picture or sound, as
//! ffmpeg's `iff` demuxer reads them.
//!
//! A file is `FORM`, a 32-bit big-endian size, a form type, then chunks
//! (id, 32-bit big-endian size, data, a pad byte when the size is odd).
//! The form types read here:
//!
//! - pictures: `ILBM` (interleaved bitplanes, "ILBM IFF Interleaved
//!   Bitmap", Commodore-Amiga 1986: `BMHD` header, `CMAP` palette, `CAMG`
//!   display mode, `BODY`), `PBM ` (Deluxe Paint's chunky pixels), `ACBM`
//!   (contiguous bitplanes in `ABIT`), `RGB8` and `RGBN` (Impulse's
//!   run-length true colour), `DEEP` (`DGBL`, `DPEL`, `DLOC`, `DBOD`);
//!   one video stream (`iff_ilbm`) of one packet, the body chunk's data;
//! - sound: `8SVX` ("8SVX IFF 8-Bit Sampled Voice", Electronic Arts 1985:
//!   `VHDR`, `CHAN`, `BODY`; planar signed 8-bit, or Fibonacci / exponential
//!   delta compressed) and `16SV` (planar signed 16-bit big-endian); one
//!   audio stream of one packet, the whole `BODY`.
//!
//! `ANIM` (animations of `ILBM` forms with delta chunks) and `MAUD`
//! (MacroSystem audio) are recognised and refused as unsupported; AIFF
//! (`FORM`…`AIFF`/`AIFC`) and DSDIFF (`FRM8`) have their own readers.
//! The text chunks `NAME`, `AUTH`, `(c) `, `ANNO` and `TEXT` are the tags.
//!
//! Entry points: [`IffDemuxer`] (`demuxer.rs`), the chunk walk and form
//! types (`chunk.rs`), the header layouts [`Bmhd`], [`Vhdr`], [`Dgbl`] and
//! the picture facts [`picture_facts`] (`header.rs`).

mod chunk;
mod demuxer;
mod header;
mod scan;
#[cfg(test)]
mod tests;

pub use chunk::{ChunkHeader, FormType};
pub use demuxer::IffDemuxer;
pub use header::{picture_facts, Bmhd, Dgbl, PictureFacts, PixelLayout, Vhdr};
