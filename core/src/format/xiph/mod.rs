//! Pieces shared by the Xiph formats (Ogg and native FLAC): their CRCs, the
//! FLAC frame header, STREAMINFO and PICTURE blocks, and the Vorbis comment
//! walker, and
//! base64 for pictures in comments.

pub mod base64;
pub mod comment;
pub mod crc;
pub mod flac;
