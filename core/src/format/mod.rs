//! One module per format family.

#[cfg(feature = "flac")]
pub mod flac;
#[cfg(feature = "mp4")]
pub mod mp4;
#[cfg(feature = "ogg")]
pub mod ogg;
#[cfg(feature = "riff")]
pub mod riff;
#[cfg(any(feature = "ogg", feature = "flac"))]
pub mod xiph;
