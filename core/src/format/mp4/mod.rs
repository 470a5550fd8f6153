//! Entry points: `demuxer.rs` for [`Mp4Demuxer`] (`open`,
//! `next_packet`), then `moov.rs` (movie and track boxes), `sample_entry.rs`
//! (`stsd`, codecs), `sample_table.rs` (per-packet cursors), `fragment.rs`
//! (`moof`), `seek.rs`, `tags.rs`; `boxes.rs` holds the raw layouts.
//! Writers: `muxer.rs` (progressive) and `fmp4.rs` (fragmented, CMAF).
//!
//! ISO base media file format: MP4, MOV, M4A, M4V, 3GP and fragmented MP4
//! (ISO/IEC 14496-12, with QuickTime File Format extensions).
//!
//! * The movie box is found by walking top-level box headers, so a `moov`
//!   after a multi-GiB `mdat` costs one seek. 64-bit sizes, size-0 last boxes
//!   and `co64` are handled.
//! * Sample tables (`stsz`/`stz2`, `stco`/`co64`, `stsc`, `stts`, `ctts`,
//!   `stss`) are never expanded: each track keeps a cursor and reads entries
//!   through the source (§8.6, §8.7).
//! * Packets are delivered in ffmpeg's order: among the tracks' next samples,
//!   the one with the lowest file offset unless their decode times are more
//!   than a second apart, then the earliest.
//! * Fragments (`moof`/`traf`/`tfhd`/`tfdt`/`trun`, §8.8) are read after the
//!   movie's own samples, in file order.
//! * Edit lists (§8.6.6) shift timestamps as ffmpeg does: the first non-empty
//!   edit's media time is subtracted, leading empty edits are added, and
//!   samples before the edit start are flagged `discard`.

pub mod boxes;
#[cfg(feature = "chapters")]
mod chapter_track;
#[cfg(feature = "chapters")]
mod chapters;
mod demuxer;
pub mod fmp4;
mod fmp4_backfill;
mod fmp4_boxes;
mod fmp4_hybrid;
mod fmp4_mfra;
mod fmp4_sidx;
mod fragment;
#[cfg(feature = "mp4-windows")]
mod heads;
mod moov;
pub mod muxer;
mod muxer_ahead;
mod muxer_box;
mod muxer_entry;
mod muxer_index;
mod muxer_moov;
mod muxer_pcm;
mod muxer_records;
mod muxer_tags;
mod muxer_times;
mod sample_entry;
#[cfg(feature = "mp4-windows")]
mod sample_fast;
mod sample_table;
mod seek;
mod table_window;
mod tags;

pub use self::demuxer::Mp4Demuxer;
