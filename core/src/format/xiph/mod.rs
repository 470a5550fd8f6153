//! Pieces shared by the Xiph formats (Ogg and native FLAC): their CRCs, the
//! FLAC frame header, STREAMINFO and PICTURE blocks, and the Vorbis comment
//! walker.

pub mod comment;
pub mod crc;
pub mod flac;
